package main

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/promptwall/promptwall/x402"
)

// facilitator answers /supported, and /verify and /settle with success
// for every payment that passes the real local checks, co-signing as fee
// payer: a stand-in for a facilitator and the chain that costs microseconds,
// so that what a load measures is the server and its store. It counts what
// it settled (/stats), so a load can check that every payment taken was
// answered with its scan, and no scan was given for a payment not taken.
type facilitator struct {
	feePayer wallet
	verified atomic.Int64
	settled  atomic.Int64
	refused  atomic.Int64
}

// facilitatorStats is the /stats answer.
type facilitatorStats struct {
	Verified int64 `json:"verified"`
	Settled  int64 `json:"settled"`
	Refused  int64 `json:"refused"`
}

func serveFacilitator(args []string) {
	fs := flag.NewFlagSet("facilitator", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:19300", "listen address (loopback)")
	fs.Parse(args)
	if !isLoopback("http://" + *addr) {
		fmt.Fprintf(os.Stderr, "%s is not a loopback address\n", *addr)
		os.Exit(2)
	}
	f := &facilitator{feePayer: newWallet("scanload facilitator fee payer")}
	srv := &http.Server{Addr: *addr, Handler: f, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintln(os.Stderr, "facilitator on", *addr, "fee payer", f.feePayer.addr)
	if err := srv.ListenAndServe(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func (f *facilitator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	reply := func(v any) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}
	switch r.URL.Path {
	case "/supported":
		reply(map[string]any{"kinds": []any{map[string]any{"x402Version": 2, "scheme": "exact",
			"network": x402.Mainnet.CAIP2, "extra": map[string]any{"feePayer": f.feePayer.addr}}}})
		return
	case "/stats":
		reply(facilitatorStats{Verified: f.verified.Load(), Settled: f.settled.Load(), Refused: f.refused.Load()})
		return
	case "/verify", "/settle":
	default:
		http.NotFound(w, r)
		return
	}
	var body struct {
		PaymentPayload      json.RawMessage   `json:"paymentPayload"`
		PaymentRequirements x402.Requirements `json:"paymentRequirements"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	p, err := x402.DecodePaymentHeader(base64.StdEncoding.EncodeToString(body.PaymentPayload))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c, err := x402.CheckExactSVM(p, body.PaymentRequirements)
	if err != nil {
		f.refused.Add(1)
	}
	if r.URL.Path == "/verify" {
		if err != nil {
			reply(map[string]any{"isValid": false, "invalidReason": err.Error()})
			return
		}
		f.verified.Add(1)
		reply(map[string]any{"isValid": true, "payer": c.Payer})
		return
	}
	if err != nil {
		reply(map[string]any{"success": false, "errorReason": err.Error(), "transaction": "", "network": x402.Mainnet.CAIP2})
		return
	}
	tx, _, err := x402.PaymentTransaction(p)
	if err != nil {
		reply(map[string]any{"success": false, "errorReason": err.Error(), "transaction": "", "network": x402.Mainnet.CAIP2})
		return
	}
	f.settled.Add(1)
	// The fee payer's signature over the message is the transaction's
	// signature, as the chain would name it.
	reply(map[string]any{"success": true, "payer": c.Payer, "network": x402.Mainnet.CAIP2,
		"transaction": x402.Base58Encode(ed25519.Sign(f.feePayer.key, tx.MessageBytes))})
}
