package main

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"

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
