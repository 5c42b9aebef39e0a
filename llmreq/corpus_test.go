package llmreq

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// allAPICases are the real request bodies of the table tests; they seed the fuzz corpora.
func allAPICases() []apiCase {
	var all []apiCase
	for _, cs := range [][]apiCase{
		openAIChatCases, openAIResponsesCases, openAICompletionsAndEmbeddingsCases,
		anthropicMessagesCases, geminiCases, ollamaCases, genericCases, supersetCases, fileCases,
	} {
		all = append(all, cs...)
	}
	return all
}

// TestWriteSeedCorpus regenerates testdata/fuzz/Fuzz{Parse,Rewrite}/seed-* from the table
// tests when LLMREQ_WRITE_CORPUS=1. The files are checked in, so `go test` runs them always.
func TestWriteSeedCorpus(t *testing.T) {
	if os.Getenv("LLMREQ_WRITE_CORPUS") != "1" {
		t.Skip("set LLMREQ_WRITE_CORPUS=1 to regenerate the seed corpus")
	}
	write := func(target, name, content string) {
		dir := filepath.Join("testdata", "fuzz", target)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range allAPICases() {
		name := "seed-" + strings.NewReplacer(" ", "_", ",", "", ":", "", ";", "", "/", "_").Replace(c.name)
		write("FuzzParse", name, fmt.Sprintf("go test fuzz v1\nstring(%q)\n[]byte(%q)\n", c.path, c.body))
		write("FuzzRewrite", name, fmt.Sprintf("go test fuzz v1\nstring(%q)\n[]byte(%q)\nuint(%d)\nstring(%q)\n",
			c.path, c.body, len(c.name), "replaced \"text\" é \u2028 <&>\n"))
	}
	for _, body := range []string{
		"\"\\ud83d\\ude00 \\ud83d \\ude00 \\ud83d\\u0041\"", "\"\xff\xed\xa0\x80\"", `[1,2,]`, `{"a":1} x`,
		`12345678901234567890.123456789e300`, `1e999999`, `{"a":"x","a":"y"}`, "\t[ ]\r\n", `"\u0000\/"`,
	} {
		write("FuzzParse", fmt.Sprintf("seed-edge-%x", sha256.Sum256([]byte(body)))[:24], fmt.Sprintf("go test fuzz v1\nstring(%q)\n[]byte(%q)\n", "/", body))
	}
}
