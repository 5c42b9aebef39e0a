package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
)

// headerSeen is the response header in which the verdicts upstream
// echoes the Prompt-Firewall-Verdict the firewall sent it.
const headerSeen = "X-Seen-Verdict"

// verdicts sends every chat body of a corpus (JSONL of {"text": <body>})
// through each target, a prompt_firewall site in log mode in front of this
// command's own upstream, and counts how the targets' verdicts differ:
// what a change to what is scanned does to benign traffic. A body whose
// verdicts differ is named by its line number, never by its text.
//
//	fwload verdicts -upstream 127.0.0.1:PORT -corpus FILE -path /v1/chat/completions -target old=URL -target new=URL
func verdicts(args []string) {
	fs := flag.NewFlagSet("verdicts", flag.ExitOnError)
	upAddr := fs.String("upstream", "127.0.0.1:9100", "address of the echoing upstream this command runs")
	corpus := fs.String("corpus", "", "JSONL file of {\"text\": <request body>}")
	path := fs.String("path", "/v1/chat/completions", "request path")
	var ts targets
	fs.Var(&ts, "target", "name=URL of a firewall site (two of them)")
	fs.Parse(args)
	if *corpus == "" || len(ts) != 2 {
		fmt.Fprintln(os.Stderr, "verdicts needs -corpus and two -target")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", *upAddr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set(headerSeen, r.Header.Get("Prompt-Firewall-Verdict"))
		io.WriteString(w, answer)
	}))
	f, err := os.Open(*corpus)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	counts := map[string]int{}
	var changed []string
	line := 0
	for sc.Scan() {
		line++
		var rec struct{ Text string }
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			fmt.Fprintf(os.Stderr, "line %d: %v\n", line, err)
			os.Exit(1)
		}
		var got [2]string
		for i, t := range ts {
			got[i] = verdictOf(t.url+*path, rec.Text)
		}
		key := ts[0].name + " " + got[0] + " -> " + ts[1].name + " " + got[1]
		counts[key]++
		if got[0] != got[1] {
			changed = append(changed, fmt.Sprintf("line %d: %s", line, key))
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Printf("%d bodies\n", line)
	for _, k := range keys {
		fmt.Printf("%6d  %s\n", counts[k], k)
	}
	for _, c := range changed {
		fmt.Println(c)
	}
}

// verdictOf posts body to url and returns the verdict the upstream saw, or
// the firewall's status when it answered itself.
func verdictOf(url, body string) string {
	resp, err := http.Post(url, "application/json", bytes.NewReader([]byte(body)))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if v := resp.Header.Get(headerSeen); v != "" {
		return v
	}
	return "status-" + strings.TrimSpace(resp.Status)
}
