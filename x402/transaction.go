package x402

import (
	"errors"
	"fmt"
)

// MaxTransactionBytes is Solana's packet size limit for a whole transaction.
const MaxTransactionBytes = 1232

// Transaction is a decoded Solana wire transaction.
type Transaction struct {
	Signatures [][64]byte
	// MessageBytes are the signed bytes: from the version byte to the end.
	MessageBytes []byte
	Message      Message
}

// Message is a decoded legacy or v0 message.
type Message struct {
	// Version is 0 for a v0 message and -1 for a legacy one.
	Version                     int
	NumRequiredSignatures       uint8
	NumReadonlySignedAccounts   uint8
	NumReadonlyUnsignedAccounts uint8
	AccountKeys                 []PublicKey // the static keys
	RecentBlockhash             [32]byte
	Instructions                []Instruction
	AddressTableLookups         []AddressTableLookup
}

// Instruction is a compiled instruction: indexes into the account keys.
type Instruction struct {
	ProgramIDIndex uint8
	Accounts       []uint8
	Data           []byte
}

// AddressTableLookup loads extra accounts from an on-chain table.
type AddressTableLookup struct {
	TableKey        PublicKey
	WritableIndexes []uint8
	ReadonlyIndexes []uint8
}

// reader reads the wire format; every read checks the remaining length so
// that no input can make it index out of range.
type reader struct {
	b   []byte
	off int
}

var errShort = errors.New("unexpected end of data")

func (r *reader) byte() (byte, error) {
	if r.off >= len(r.b) {
		return 0, errShort
	}
	c := r.b[r.off]
	r.off++
	return c, nil
}

func (r *reader) bytes(n int) ([]byte, error) {
	if n < 0 || n > len(r.b)-r.off {
		return nil, errShort
	}
	s := r.b[r.off : r.off+n]
	r.off += n
	return s, nil
}

// compactU16 reads Solana's "short vec" length: 7 bits per byte, low first,
// at most 3 bytes and at most 0xffff. Like Solana, it refuses non-canonical
// encodings (a redundant zero continuation byte), which would otherwise let
// two different byte strings carry the same transaction.
func (r *reader) compactU16() (int, error) {
	v := 0
	for i := 0; i < 3; i++ {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		if i == 2 && c > 0x03 {
			return 0, errors.New("compact-u16 overflows 16 bits")
		}
		v |= int(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			if i > 0 && c == 0 {
				return 0, errors.New("compact-u16 is not in its shortest form")
			}
			return v, nil
		}
	}
	return 0, errors.New("compact-u16 longer than 3 bytes")
}

func (r *reader) key() (PublicKey, error) {
	var k PublicKey
	b, err := r.bytes(32)
	if err != nil {
		return k, err
	}
	copy(k[:], b)
	return k, nil
}

// ParseTransaction decodes a wire transaction: compact-u16 signature count,
// 64-byte signatures, then the message. It checks the structure Solana's
// sanitizer checks (counts, indexes, no duplicate keys, nothing left over),
// not the signatures.
func ParseTransaction(b []byte) (*Transaction, error) {
	if len(b) > MaxTransactionBytes {
		return nil, fmt.Errorf("transaction of %d bytes exceeds the %d-byte limit", len(b), MaxTransactionBytes)
	}
	r := &reader{b: b}
	n, err := r.compactU16()
	if err != nil {
		return nil, fmt.Errorf("reading signature count: %w", err)
	}
	if n == 0 {
		return nil, errors.New("transaction has no signatures")
	}
	tx := &Transaction{Signatures: make([][64]byte, 0, min(n, len(b)/64))}
	for i := 0; i < n; i++ {
		s, err := r.bytes(64)
		if err != nil {
			return nil, fmt.Errorf("reading signature %d of %d: %w", i, n, err)
		}
		tx.Signatures = append(tx.Signatures, [64]byte(s))
	}
	tx.MessageBytes = b[r.off:]
	m, err := ParseMessage(tx.MessageBytes)
	if err != nil {
		return nil, err
	}
	tx.Message = *m
	if int(m.NumRequiredSignatures) != len(tx.Signatures) {
		return nil, fmt.Errorf("transaction carries %d signatures, its message requires %d",
			len(tx.Signatures), m.NumRequiredSignatures)
	}
	return tx, nil
}

// ParseMessage decodes a legacy or v0 message and checks its consistency.
func ParseMessage(b []byte) (*Message, error) {
	r := &reader{b: b}
	m := &Message{Version: -1}
	first, err := r.byte()
	if err != nil {
		return nil, fmt.Errorf("reading message: %w", err)
	}
	if first&0x80 != 0 {
		m.Version = int(first & 0x7f)
		if m.Version != 0 {
			return nil, fmt.Errorf("message version %d is not supported", m.Version)
		}
		if first, err = r.byte(); err != nil {
			return nil, fmt.Errorf("reading message header: %w", err)
		}
	}
	m.NumRequiredSignatures = first
	if m.NumReadonlySignedAccounts, err = r.byte(); err != nil {
		return nil, fmt.Errorf("reading message header: %w", err)
	}
	if m.NumReadonlyUnsignedAccounts, err = r.byte(); err != nil {
		return nil, fmt.Errorf("reading message header: %w", err)
	}
	nkeys, err := r.compactU16()
	if err != nil {
		return nil, fmt.Errorf("reading account key count: %w", err)
	}
	if nkeys > (len(b)-r.off)/32 {
		return nil, fmt.Errorf("reading %d account keys: %w", nkeys, errShort)
	}
	m.AccountKeys = make([]PublicKey, nkeys)
	seen := make(map[PublicKey]bool, nkeys)
	for i := range m.AccountKeys {
		if m.AccountKeys[i], err = r.key(); err != nil {
			return nil, fmt.Errorf("reading account key %d: %w", i, err)
		}
		if seen[m.AccountKeys[i]] {
			return nil, fmt.Errorf("account key %s appears twice", m.AccountKeys[i])
		}
		seen[m.AccountKeys[i]] = true
	}
	bh, err := r.bytes(32)
	if err != nil {
		return nil, fmt.Errorf("reading recent blockhash: %w", err)
	}
	m.RecentBlockhash = [32]byte(bh)
	nix, err := r.compactU16()
	if err != nil {
		return nil, fmt.Errorf("reading instruction count: %w", err)
	}
	// Each instruction takes at least 3 bytes: bounds the allocation.
	if nix > (len(b)-r.off)/3 {
		return nil, fmt.Errorf("reading %d instructions: %w", nix, errShort)
	}
	m.Instructions = make([]Instruction, nix)
	for i := range m.Instructions {
		if m.Instructions[i], err = readInstruction(r); err != nil {
			return nil, fmt.Errorf("reading instruction %d: %w", i, err)
		}
	}
	if m.Version == 0 {
		if m.AddressTableLookups, err = readLookups(r); err != nil {
			return nil, err
		}
	}
	if r.off != len(b) {
		return nil, fmt.Errorf("%d bytes after the message", len(b)-r.off)
	}
	if err := m.sanitize(); err != nil {
		return nil, err
	}
	return m, nil
}

func readInstruction(r *reader) (Instruction, error) {
	var ix Instruction
	var err error
	if ix.ProgramIDIndex, err = r.byte(); err != nil {
		return ix, err
	}
	n, err := r.compactU16()
	if err != nil {
		return ix, fmt.Errorf("account count: %w", err)
	}
	if ix.Accounts, err = r.bytes(n); err != nil {
		return ix, fmt.Errorf("accounts: %w", err)
	}
	if n, err = r.compactU16(); err != nil {
		return ix, fmt.Errorf("data length: %w", err)
	}
	if ix.Data, err = r.bytes(n); err != nil {
		return ix, fmt.Errorf("data: %w", err)
	}
	return ix, nil
}

func readLookups(r *reader) ([]AddressTableLookup, error) {
	n, err := r.compactU16()
	if err != nil {
		return nil, fmt.Errorf("reading lookup table count: %w", err)
	}
	// Each lookup takes at least 34 bytes: bounds the allocation.
	if n > (len(r.b)-r.off)/34 {
		return nil, fmt.Errorf("reading %d lookup tables: %w", n, errShort)
	}
	out := make([]AddressTableLookup, n)
	for i := range out {
		if out[i].TableKey, err = r.key(); err != nil {
			return nil, fmt.Errorf("reading lookup table %d: %w", i, err)
		}
		for _, dst := range []*[]uint8{&out[i].WritableIndexes, &out[i].ReadonlyIndexes} {
			k, err := r.compactU16()
			if err != nil {
				return nil, fmt.Errorf("reading lookup table %d: %w", i, err)
			}
			if *dst, err = r.bytes(k); err != nil {
				return nil, fmt.Errorf("reading lookup table %d indexes: %w", i, err)
			}
		}
	}
	return out, nil
}

// sanitize applies the consistency rules of Solana's message sanitizer.
func (m *Message) sanitize() error {
	nstatic := len(m.AccountKeys)
	if m.NumRequiredSignatures == 0 {
		return errors.New("message requires no signature: it has no fee payer")
	}
	if int(m.NumRequiredSignatures) > nstatic {
		return fmt.Errorf("message requires %d signatures but has %d keys", m.NumRequiredSignatures, nstatic)
	}
	if m.NumReadonlySignedAccounts >= m.NumRequiredSignatures {
		return errors.New("the fee payer is read-only")
	}
	if int(m.NumReadonlyUnsignedAccounts) > nstatic-int(m.NumRequiredSignatures) {
		return errors.New("more read-only unsigned accounts than unsigned accounts")
	}
	total := nstatic
	for _, l := range m.AddressTableLookups {
		if len(l.WritableIndexes)+len(l.ReadonlyIndexes) == 0 {
			return errors.New("address table lookup loads no account")
		}
		total += len(l.WritableIndexes) + len(l.ReadonlyIndexes)
	}
	if total > 256 {
		return fmt.Errorf("message references %d accounts, more than 256", total)
	}
	for i, ix := range m.Instructions {
		// A program is never loaded from a lookup table, nor is it the fee payer.
		if int(ix.ProgramIDIndex) >= nstatic || ix.ProgramIDIndex == 0 {
			return fmt.Errorf("instruction %d: program index %d is invalid", i, ix.ProgramIDIndex)
		}
		for _, a := range ix.Accounts {
			if int(a) >= total {
				return fmt.Errorf("instruction %d: account index %d out of range", i, a)
			}
		}
	}
	return nil
}

// Signer reports whether static account i must sign.
func (m *Message) Signer(i int) bool { return i < int(m.NumRequiredSignatures) }
