package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"unicode/utf16"
)

// maxTextUnits is the service's cap on a text, in UTF-16 code units.
const maxTextUnits = 8000

// corpusFiles are the published corpora the texts are drawn from: attacks
// (jailbreaks and prompt injections) and benign prompts, alternately, so
// that a load scans both what the rules catch and what they pass.
var corpusFiles = []string{"injection_jailbreak.jsonl", "benign_prompts.jsonl"}

// text is one corpus text to scan, with the JSON of its "text" value.
type text struct {
	label string
	json  []byte // the JSON string, quoted
}

// loadTexts takes perFile texts from each corpus file in dir, spread
// evenly over the file (every k-th record, from the first), and returns
// them interleaved: attack, benign, attack, ...
func loadTexts(dir string, perFile int) ([]text, error) {
	var byFile [][]text
	for _, name := range corpusFiles {
		all, err := readCorpus(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		if len(all) < perFile {
			return nil, fmt.Errorf("%s has %d usable texts, fewer than %d", name, len(all), perFile)
		}
		step := len(all) / perFile
		var picked []text
		for i := 0; len(picked) < perFile; i += step {
			picked = append(picked, all[i])
		}
		byFile = append(byFile, picked)
	}
	var out []text
	for i := range perFile {
		for _, f := range byFile {
			out = append(out, f[i])
		}
	}
	return out, nil
}

// readCorpus reads a JSONL corpus of {"text","label","source"} records,
// keeping the texts the service accepts (all of them, in the published
// corpora, which drop longer ones).
func readCorpus(path string) ([]text, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<22)
	var out []text
	for line := 1; sc.Scan(); line++ {
		var rec struct {
			Text  string `json:"text"`
			Label string `json:"label"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, line, err)
		}
		if rec.Text == "" || len(utf16.Encode([]rune(rec.Text))) > maxTextUnits {
			continue
		}
		b, err := json.Marshal(rec.Text)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, line, err)
		}
		out = append(out, text{label: rec.Label, json: b})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return out, nil
}

// scanBody is a POST /scan body; precheckBody a POST /precheck one, which
// names the caller's wallet.
func scanBody(t text) []byte {
	return append(append([]byte(`{"text":`), t.json...), '}')
}

func precheckBody(t text, caller string) []byte {
	b := append([]byte(`{"caller":"`), caller...)
	b = append(b, `","text":`...)
	return append(append(b, t.json...), '}')
}
