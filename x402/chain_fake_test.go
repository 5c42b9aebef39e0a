package x402

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// fakeChain is a JSON-RPC server holding one account's history. Each
// answer can be replaced: override[method] is a raw "result" or "error"
// member; body[method] is the whole HTTP body ({id} is the request id).
type fakeChain struct {
	t         *testing.T
	valid     bool
	slot      uint64 // context slot of isBlockhashValid
	blockTime int64  // getBlockTime of that slot
	history   []fakeEntry
	override  map[string]string
	body      map[string]string
	status    int

	calls *callLog
}

type callLog struct {
	mu      sync.Mutex
	methods []string
}

// fakeEntry is a transaction in the account's history, newest first.
type fakeEntry struct {
	sig       string
	blockTime int64
	result    string // getTransaction's result
	rpcError  string // getTransaction's error instead, when set
}

func (f *fakeChain) count(method string) int {
	f.calls.mu.Lock()
	defer f.calls.mu.Unlock()
	n := 0
	for _, c := range f.calls.methods {
		if c == method {
			n++
		}
	}
	return n
}

func (f *fakeChain) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID     json.RawMessage   `json:"id"`
		Method string            `json:"method"`
		Params []json.RawMessage `json:"params"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		f.t.Errorf("fake chain: %v", err)
		return
	}
	f.calls.mu.Lock()
	f.calls.methods = append(f.calls.methods, req.Method)
	f.calls.mu.Unlock()
	if f.status != 0 {
		w.WriteHeader(f.status)
	}
	if b, ok := f.body[req.Method]; ok {
		fmt.Fprint(w, strings.ReplaceAll(b, "{id}", string(req.ID)))
		return
	}
	member, ok := f.override[req.Method]
	if !ok {
		member = f.answer(req.Method, req.Params)
	}
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,%s}`, req.ID, member)
}

// answer is the honest result member, after checking that the client asks at
// commitment finalized, no earlier than the blockhash check's slot.
func (f *fakeChain) answer(method string, params []json.RawMessage) string {
	r, e := f.result(method, params)
	if e != "" {
		return `"error":` + e
	}
	return `"result":` + r
}

func (f *fakeChain) result(method string, params []json.RawMessage) (result, rpcError string) {
	var cfg struct {
		Commitment     string `json:"commitment"`
		Limit          int    `json:"limit"`
		Before         string `json:"before"`
		MinContextSlot uint64 `json:"minContextSlot"`
		Encoding       string `json:"encoding"`
		MaxVersion     *int   `json:"maxSupportedTransactionVersion"`
	}
	if len(params) > 1 {
		json.Unmarshal(params[1], &cfg)
	}
	if method != "getBlockTime" && cfg.Commitment != "finalized" {
		f.t.Errorf("%s at commitment %q", method, cfg.Commitment)
	}
	switch method {
	case "isBlockhashValid":
		return fmt.Sprintf(`{"context":{"slot":%d},"value":%t}`, f.slot, f.valid), ""
	case "getBlockTime":
		return fmt.Sprint(f.blockTime), ""
	case "getSignaturesForAddress":
		if cfg.MinContextSlot != f.slot {
			f.t.Errorf("getSignaturesForAddress minContextSlot %d, want %d", cfg.MinContextSlot, f.slot)
		}
		start := 0
		if cfg.Before != "" {
			for i, e := range f.history {
				if e.sig == cfg.Before {
					start = i + 1
				}
			}
		}
		var page []string
		for _, e := range f.history[start:] {
			if len(page) == cfg.Limit {
				break
			}
			page = append(page, fmt.Sprintf(`{"signature":%q,"slot":7,"err":null,"memo":null,"blockTime":%d,"confirmationStatus":"finalized"}`, e.sig, e.blockTime))
		}
		return "[" + strings.Join(page, ",") + "]", ""
	case "getTransaction":
		if cfg.Encoding != "base64" || cfg.MaxVersion == nil || *cfg.MaxVersion != 0 {
			f.t.Errorf("getTransaction with %+v", cfg)
		}
		var sig string
		json.Unmarshal(params[0], &sig)
		for _, e := range f.history {
			if e.sig == sig {
				return e.result, e.rpcError
			}
		}
		return "null", ""
	}
	f.t.Errorf("unexpected method %s", method)
	return "null", ""
}

// txResult is getTransaction's result for wire with meta.err errJSON.
func txResult(wire []byte, errJSON string) string {
	return fmt.Sprintf(`{"slot":42,"blockTime":1,"version":0,"transaction":[%q,"base64"],"meta":{"err":%s,"fee":5000,"logMessages":[]}}`,
		base64.StdEncoding.EncodeToString(wire), errJSON)
}
