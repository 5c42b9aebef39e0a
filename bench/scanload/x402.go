package main

// The two x402 parties a load plays: the payers, whose payments are real
// signed Solana transactions, and a facilitator that settles each valid
// one at once.

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/promptwall/promptwall/x402"
)

// wallet is an ed25519 key made from a seed: a load makes thousands, and
// a seed naming each is all they need.
type wallet struct {
	key  ed25519.PrivateKey
	pub  x402.PublicKey
	addr string
}

func newWallet(seed string) wallet {
	s := sha256.Sum256([]byte(seed))
	k := ed25519.NewKeyFromSeed(s[:])
	var pub x402.PublicKey
	copy(pub[:], k.Public().(ed25519.PublicKey))
	return wallet{key: k, pub: pub, addr: x402.Base58Encode(pub[:])}
}

// payments builds PAYMENT-SIGNATURE headers for one offer: real signed
// Solana transactions of the layout @x402/svm sends (v0 message
// [SetComputeUnitLimit, SetComputeUnitPrice, TransferChecked, Memo], fee
// payer slot left for the facilitator), so that the server's local checks
// (x402.CheckExactSVM) and the facilitator's pass as they would for a real
// client.
type payments struct {
	offer    *x402.PaymentRequired
	req      x402.Requirements
	amount   uint64
	mint     x402.PublicKey
	feePayer x402.PublicKey
	dest     x402.PublicKey
}

func newPayments(offer *x402.PaymentRequired) (*payments, error) {
	if len(offer.Accepts) == 0 {
		return nil, fmt.Errorf("the offer accepts nothing")
	}
	req := offer.Accepts[0]
	amount, err := strconv.ParseUint(req.Amount, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("offer amount %q: %v", req.Amount, err)
	}
	mint, err := x402.ParsePublicKey(req.Asset)
	if err != nil {
		return nil, fmt.Errorf("offer asset: %v", err)
	}
	payTo, err := x402.ParsePublicKey(req.PayTo)
	if err != nil {
		return nil, fmt.Errorf("offer payTo: %v", err)
	}
	feePayer, err := x402.ParsePublicKey(req.FeePayer())
	if err != nil {
		return nil, fmt.Errorf("offer feePayer: %v", err)
	}
	dest, err := x402.AssociatedTokenAddress(payTo, x402.TokenProgram, mint)
	if err != nil {
		return nil, err
	}
	return &payments{offer: offer, req: req, amount: amount, mint: mint, feePayer: feePayer, dest: dest}, nil
}

// header is a payment of the offer's first requirements by w, made unique
// by memo (a wallet pays once, but the memo keeps two runs apart too).
func (p *payments) header(w wallet, memo string) (string, error) {
	source, err := x402.AssociatedTokenAddress(w.pub, x402.TokenProgram, p.mint)
	if err != nil {
		return "", err
	}
	keys := []x402.PublicKey{p.feePayer, w.pub, source, p.dest,
		x402.ComputeBudgetProgram, x402.TokenProgram, p.mint, x402.MemoProgram}
	// Header: version 0, two signers (fee payer, authority), one of them
	// read-only, four read-only unsigned accounts (the programs and mint).
	m := []byte{0x80, 2, 1, 4, byte(len(keys))}
	for _, k := range keys {
		m = append(m, k[:]...)
	}
	blockhash := sha256.Sum256([]byte("scanload blockhash"))
	m = append(m, blockhash[:]...)
	type instruction struct {
		program  byte
		accounts []byte
		data     []byte
	}
	ixs := []instruction{
		{4, nil, binary.LittleEndian.AppendUint32([]byte{2}, 20000)},
		{4, nil, binary.LittleEndian.AppendUint64([]byte{3}, 1)},
		{5, []byte{2, 6, 3, 1}, append(binary.LittleEndian.AppendUint64([]byte{12}, p.amount), 6)},
		{7, nil, []byte(memo)},
	}
	m = append(m, byte(len(ixs)))
	for _, ix := range ixs {
		m = append(m, ix.program, byte(len(ix.accounts)))
		m = append(m, ix.accounts...)
		m = append(m, byte(len(ix.data)))
		m = append(m, ix.data...)
	}
	m = append(m, 0) // no address table lookups
	tx := append([]byte{2}, make([]byte, ed25519.SignatureSize)...)
	tx = append(tx, ed25519.Sign(w.key, m)...)
	tx = append(tx, m...)
	b, err := json.Marshal(map[string]any{
		"x402Version": 2, "resource": p.offer.Resource, "accepted": p.req,
		"payload": map[string]string{"transaction": base64.StdEncoding.EncodeToString(tx)},
	})
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

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
