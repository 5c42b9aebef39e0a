package x402

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"unicode/utf8"
)

// MaxComputeUnitPrice is the highest priority fee, in micro-lamports per
// compute unit, that a client may make the facilitator's fee payer pay: 5
// lamports per unit, the bound of the static layout path of
// scheme_exact_svm.md section 3.1.
const MaxComputeUnitPrice = 5_000_000

// MaxComputeUnitLimit is the highest compute unit limit accepted: the
// reference default of scheme_exact_svm.md section 2.2.1. With
// MaxComputeUnitPrice it bounds the priority fee of one payment to 2,000,000
// lamports; the reference client asks for 20,000 units.
const MaxComputeUnitLimit = 400_000

// MaxMemoBytes is the longest extra.memo a seller may set (scheme_exact_svm.md,
// PaymentRequirements).
const MaxMemoBytes = 256

// Instruction discriminators.
const (
	computeUnitLimitIx = 2
	computeUnitPriceIx = 3
	transferCheckedIx  = 12
)

// Checked is what the local checks learned from a payment.
type Checked struct {
	Payer  string // base58 wallet that signed the transfer (the token authority)
	Amount uint64 // atomic units transferred
	// Key is the hex sha256 of the message bytes: the same payment always has
	// the same key, whatever signatures are attached, so a server records it
	// to refuse a second use.
	Key string
}

// CheckExactSVM makes every check on a payment that needs no network, against
// the requirements the server offered (req, as returned by Match). A refusal
// is an *Invalid carrying the reason; any other error means req itself is
// unusable (a configuration fault, not the client's).
func CheckExactSVM(p *PaymentPayload, req Requirements) (*Checked, error) {
	if p == nil {
		return nil, errors.New("checking payment: no payload")
	}
	if p.Accepted.Scheme != SchemeExact || req.Scheme != SchemeExact {
		return nil, invalid(ReasonUnsupportedScheme, fmt.Sprintf("scheme %q", p.Accepted.Scheme))
	}
	if p.Accepted.Network != req.Network {
		return nil, invalid(ReasonNetworkMismatch, fmt.Sprintf("paid on %q, want %q", p.Accepted.Network, req.Network))
	}
	rc, err := compileRequirements(req)
	if err != nil {
		return nil, err
	}
	if rc.feePayerErr != nil {
		return nil, invalid(ReasonMissingFeePayer, rc.feePayerErr.Error())
	}

	tx, err := decodeTransaction(p.Payload.Transaction)
	if err != nil {
		return nil, invalid(ReasonCouldNotBeDecoded, err.Error())
	}
	m := &tx.Message
	if m.Version != 0 {
		return nil, invalid(ReasonVersionUnsupported, "legacy message, want v0")
	}
	if len(m.AddressTableLookups) > 0 {
		return nil, invalid(ReasonLookupTables, fmt.Sprintf("%d address table lookups", len(m.AddressTableLookups)))
	}
	if m.AccountKeys[0] != rc.feePayer {
		return nil, invalid(ReasonFeePayerMismatch, fmt.Sprintf("fee payer %s, want %s", m.AccountKeys[0], rc.feePayer))
	}
	// The fee payer's slot is empty until the facilitator signs; every other
	// signer must already have signed exactly these message bytes.
	for i := 1; i < int(m.NumRequiredSignatures); i++ {
		if !ed25519.Verify(m.AccountKeys[i][:], tx.MessageBytes, tx.Signatures[i][:]) {
			return nil, invalid(ReasonSignatureInvalid, fmt.Sprintf("signature of %s does not verify", m.AccountKeys[i]))
		}
	}

	// The static layout of scheme_exact_svm.md section 3.1: limit, price,
	// transfer, then up to four Lighthouse or Memo instructions.
	ixs := m.Instructions
	if len(ixs) < 3 || len(ixs) > 7 {
		return nil, invalid(ReasonInstructionsLength, fmt.Sprintf("%d instructions, want 3 to 7", len(ixs)))
	}
	if err := checkComputeBudget(m); err != nil {
		return nil, err
	}
	c, err := checkTransfer(m, rc)
	if err != nil {
		return nil, err
	}
	// Signer set integrity (section 2.1.4): only the fee payer and the
	// transfer authority may be required to sign. The authority signs and
	// is not the fee payer (checkTransfer), so it is signer 1.
	if n := m.NumRequiredSignatures; n != 2 {
		return nil, invalid(ReasonExcessiveSigners, fmt.Sprintf("%d required signers, want 2 (fee payer and payer)", n))
	}
	if err := checkOptional(m, req.Memo()); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(tx.MessageBytes)
	c.Key = hex.EncodeToString(sum[:])
	return c, nil
}

// compiledRequirements holds the requirements decoded once.
type compiledRequirements struct {
	feePayer    PublicKey
	feePayerErr error
	mint        PublicKey
	payTo       PublicKey
	amount      uint64
}

func compileRequirements(req Requirements) (*compiledRequirements, error) {
	n, ok := networkByCAIP2(req.Network)
	if !ok {
		return nil, fmt.Errorf("checking payment: network %q is not supported", req.Network)
	}
	if req.Asset != n.USDCMint {
		return nil, fmt.Errorf("checking payment: asset %s is not USDC on %s (%s)", req.Asset, n.Name, n.USDCMint)
	}
	rc := &compiledRequirements{mint: mustPublicKey(n.USDCMint)}
	var err error
	if rc.payTo, err = ParsePublicKey(req.PayTo); err != nil {
		return nil, fmt.Errorf("checking payment: payTo: %w", err)
	}
	if rc.amount, err = parseUnits(req.Amount); err != nil {
		return nil, fmt.Errorf("checking payment: %w", err)
	}
	if n := len(req.Memo()); n > MaxMemoBytes {
		return nil, fmt.Errorf("checking payment: extra.memo is %d bytes, more than %d", n, MaxMemoBytes)
	}
	if fp := req.FeePayer(); fp == "" {
		rc.feePayerErr = errors.New("requirements have no extra.feePayer")
	} else if rc.feePayer, err = ParsePublicKey(fp); err != nil {
		rc.feePayerErr = err
	}
	return rc, nil
}

// maxTransactionBase64 is the base64 length of the largest transaction.
var maxTransactionBase64 = base64.StdEncoding.EncodedLen(MaxTransactionBytes)

func decodeTransaction(s string) (*Transaction, error) {
	if len(s) > maxTransactionBase64 {
		return nil, fmt.Errorf("transaction of %d base64 characters is longer than %d", len(s), maxTransactionBase64)
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("decoding transaction base64: %w", err)
	}
	return ParseTransaction(b)
}

func program(m *Message, ix Instruction) PublicKey { return m.AccountKeys[ix.ProgramIDIndex] }

func checkComputeBudget(m *Message) error {
	limit, price := m.Instructions[0], m.Instructions[1]
	if program(m, limit) != ComputeBudgetProgram || len(limit.Data) != 5 || limit.Data[0] != computeUnitLimitIx {
		return invalid(ReasonComputeLimitInstruction, "instruction 1 is not SetComputeUnitLimit")
	}
	if u := binary.LittleEndian.Uint32(limit.Data[1:]); u > MaxComputeUnitLimit {
		return invalid(ReasonComputeLimitTooHigh, fmt.Sprintf("%d compute units, at most %d", u, MaxComputeUnitLimit))
	}
	if program(m, price) != ComputeBudgetProgram || len(price.Data) != 9 || price.Data[0] != computeUnitPriceIx {
		return invalid(ReasonComputePriceInstruction, "instruction 2 is not SetComputeUnitPrice")
	}
	if p := binary.LittleEndian.Uint64(price.Data[1:]); p > MaxComputeUnitPrice {
		return invalid(ReasonComputePriceTooHigh, fmt.Sprintf("%d micro-lamports per unit, at most %d", p, MaxComputeUnitPrice))
	}
	return nil
}

// checkTransfer checks instruction 3, TransferChecked with accounts
// [source, mint, destination, authority], and the fee payer's isolation.
func checkTransfer(m *Message, rc *compiledRequirements) (*Checked, error) {
	ix := m.Instructions[2]
	tokenProgram := program(m, ix)
	if tokenProgram != TokenProgram && tokenProgram != Token2022Program {
		return nil, invalid(ReasonNoTransferInstruction, fmt.Sprintf("instruction 3 runs %s, not a token program", tokenProgram))
	}
	if len(ix.Data) != 10 || ix.Data[0] != transferCheckedIx || len(ix.Accounts) != 4 {
		return nil, invalid(ReasonNoTransferInstruction, "instruction 3 is not a single-signer TransferChecked")
	}
	key := func(i int) PublicKey { return m.AccountKeys[ix.Accounts[i]] }
	mint, destination, authority := key(1), key(2), key(3)
	if authority == rc.feePayer {
		return nil, invalid(ReasonFeePayerTransferring, "the fee payer is the transfer authority")
	}
	// Anywhere in an instruction the fee payer's key could be debited or
	// used as an authority; it must only pay fees.
	for i, other := range m.Instructions {
		for _, a := range other.Accounts {
			if m.AccountKeys[a] == rc.feePayer {
				return nil, invalid(ReasonFeePayerTransferring, fmt.Sprintf("instruction %d uses the fee payer's account", i+1))
			}
		}
	}
	if !m.Signer(int(ix.Accounts[3])) {
		return nil, invalid(ReasonNoTransferInstruction, "the transfer authority does not sign")
	}
	if mint != rc.mint {
		return nil, invalid(ReasonMintMismatch, fmt.Sprintf("mint %s, want %s", mint, rc.mint))
	}
	if d := ix.Data[9]; d != USDCDecimals {
		return nil, invalid(ReasonDecimalsMismatch, fmt.Sprintf("%d decimals, want %d", d, USDCDecimals))
	}
	want, err := AssociatedTokenAddress(rc.payTo, tokenProgram, rc.mint)
	if err != nil {
		return nil, invalid(ReasonRecipientMismatch, err.Error())
	}
	if destination != want {
		return nil, invalid(ReasonRecipientMismatch, fmt.Sprintf("destination %s, want %s", destination, want))
	}
	amount := binary.LittleEndian.Uint64(ix.Data[1:9])
	if amount != rc.amount {
		return nil, invalid(ReasonAmountMismatch, fmt.Sprintf("amount %d, want %d", amount, rc.amount))
	}
	return &Checked{Payer: authority.String(), Amount: amount}, nil
}

// checkOptional allows only Memo and Lighthouse after the transfer (the
// wallet-injected Lighthouse assertions of Phantom and Solflare, in the
// slots the static layout gives them and nowhere else), and exactly one
// memo equal to extra.memo when the seller set one. Without extra.memo a
// memo is the client's uniqueness nonce: the spec asks clients for one but
// gives the verifier no rule on it, so none is required here either.
func checkOptional(m *Message, memo string) error {
	reasons := []string{ReasonUnknownFourth, ReasonUnknownFifth, ReasonUnknownSixth, ReasonUnknownSeventh}
	var memos [][]byte
	for i, ix := range m.Instructions[3:] {
		switch program(m, ix) {
		case MemoProgram:
			// The Memo program fails on anything but UTF-8: such a
			// transaction can never land.
			if !utf8.Valid(ix.Data) {
				return invalid(ReasonMemoNotUTF8, fmt.Sprintf("instruction %d: memo is not UTF-8", i+4))
			}
			memos = append(memos, ix.Data)
		case LighthouseProgram:
		default:
			return invalid(reasons[i], fmt.Sprintf("instruction %d runs %s", i+4, program(m, ix)))
		}
	}
	if memo == "" {
		return nil
	}
	if len(memos) != 1 {
		return invalid(ReasonMemoCount, fmt.Sprintf("%d memo instructions, want 1", len(memos)))
	}
	if string(memos[0]) != memo {
		return invalid(ReasonMemoMismatch, fmt.Sprintf("memo %q, want %q", memos[0], memo))
	}
	return nil
}
