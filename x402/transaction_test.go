package x402

import (
	"bytes"
	"strings"
	"testing"
)

func TestCompactU16(t *testing.T) {
	ok := []struct {
		in   []byte
		want int
	}{
		{[]byte{0x00}, 0},
		{[]byte{0x7f}, 127},
		{[]byte{0x80, 0x01}, 128},
		{[]byte{0xff, 0x7f}, 16383},
		{[]byte{0x80, 0x80, 0x01}, 16384},
		{[]byte{0xff, 0xff, 0x03}, 65535},
	}
	for _, c := range ok {
		r := &reader{b: c.in}
		got, err := r.compactU16()
		if err != nil || got != c.want || r.off != len(c.in) {
			t.Errorf("compactU16(%x) = %d, %v (read %d)", c.in, got, err, r.off)
		}
		if enc := compactU16(c.want); !bytes.Equal(enc, c.in) {
			t.Errorf("test encoder gives %x for %d, want %x", enc, c.want, c.in)
		}
	}
	bad := [][]byte{
		{},                       // empty
		{0x80},                   // continuation without a next byte
		{0x80, 0x00},             // non-canonical zero
		{0xff, 0x00},             // non-canonical 127
		{0x80, 0x80, 0x00},       // non-canonical, three bytes
		{0xff, 0xff, 0x04},       // 65536
		{0x80, 0x80, 0x80, 0x01}, // four bytes
	}
	for _, in := range bad {
		r := &reader{b: in}
		if got, err := r.compactU16(); err == nil {
			t.Errorf("compactU16(%x) = %d, want an error", in, got)
		}
	}
}

func TestParseRecordedTransaction(t *testing.T) {
	r := loadRecorded(t)["memo"]
	p := decodeRecorded(t, r)
	tx, err := ParseTransaction(recordedWire(t, p))
	if err != nil {
		t.Fatal(err)
	}
	m := tx.Message
	if m.Version != 0 || len(tx.Signatures) != 2 || m.NumRequiredSignatures != 2 || len(m.AddressTableLookups) != 0 {
		t.Fatalf("message %+v", m)
	}
	if m.AccountKeys[0].String() != r.Requirements.FeePayer() || m.AccountKeys[1].String() != r.Payer {
		t.Fatalf("signers %s %s", m.AccountKeys[0], m.AccountKeys[1])
	}
	if tx.Signatures[0] != [64]byte{} {
		t.Fatal("the fee payer slot of an unsettled payment should be empty")
	}
	if len(m.Instructions) != 4 || string(m.Instructions[3].Data) != r.Requirements.Memo() {
		t.Fatalf("instructions %+v", m.Instructions)
	}
	if tx.MessageBytes[0] != 0x80 {
		t.Fatalf("message starts with %x", tx.MessageBytes[0])
	}
}

func TestParseTransactionRefuses(t *testing.T) {
	p := newPayment(t)
	good := p.wire()
	if _, err := ParseTransaction(good); err != nil {
		t.Fatal(err)
	}
	msg, _, nsig := compileMessage(p.feePayer.pub, p.ixs, false, nil)
	sigs := func(n int) []byte { return append(compactU16(n), make([]byte, 64*n)...) }
	withMsg := func(f func(m []byte) []byte) []byte {
		m := f(append([]byte(nil), msg...))
		return append(sigs(int(nsig)), m...)
	}
	cases := map[string][]byte{
		"empty":                      {},
		"no signatures":              append(compactU16(0), msg...),
		"one signature":              append(sigs(1), msg...),
		"three signatures":           append(sigs(3), msg...),
		"trailing byte":              append(append([]byte(nil), good...), 7),
		"too long":                   append(append([]byte(nil), good...), make([]byte, MaxTransactionBytes)...),
		"version 1":                  withMsg(func(m []byte) []byte { m[0] = 0x81; return m }),
		"readonly fee payer":         withMsg(func(m []byte) []byte { m[2] = 2; return m }),
		"zero signers":               append(compactU16(0), withMsg(func(m []byte) []byte { m[1] = 0; return m })[1+64*int(nsig):]...),
		"too many readonly unsigned": withMsg(func(m []byte) []byte { m[3] = 200; return m }),
		"duplicate key": withMsg(func(m []byte) []byte {
			copy(m[5+32:5+64], m[5:5+32]) // key 1 := key 0
			return m
		}),
		"program index 0":            withMsg(func(m []byte) []byte { return setFirstProgramIndex(t, m, 0) }),
		"program index out of range": withMsg(func(m []byte) []byte { return setFirstProgramIndex(t, m, 250) }),
	}
	for name, b := range cases {
		if tx, err := ParseTransaction(b); err == nil {
			t.Errorf("%s: parsed %+v", name, tx.Message)
		}
	}
}

// setFirstProgramIndex rewrites the program index of a message's first
// instruction (the byte after the instruction count that follows the
// blockhash).
func setFirstProgramIndex(t *testing.T, m []byte, v byte) []byte {
	t.Helper()
	parsed, err := ParseMessage(m)
	if err != nil {
		t.Fatal(err)
	}
	off := 1 + 3 + len(compactU16(len(parsed.AccountKeys))) + 32*len(parsed.AccountKeys) + 32 + len(compactU16(len(parsed.Instructions)))
	m[off] = v
	return m
}

func TestParseLegacyMessage(t *testing.T) {
	p := newPayment(t)
	p.legacy = true
	tx, err := ParseTransaction(p.wire())
	if err != nil {
		t.Fatal(err)
	}
	if tx.Message.Version != -1 || len(tx.Message.Instructions) != 4 {
		t.Fatalf("legacy message %+v", tx.Message)
	}
}

func TestParseErrorsSayWhere(t *testing.T) {
	good := newPayment(t).wire()
	_, err := ParseTransaction(good[:len(good)-3])
	if err == nil || !strings.Contains(err.Error(), "unexpected end of data") {
		t.Fatalf("error %v", err)
	}
}
