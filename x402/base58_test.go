package x402

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestBase58KnownValues(t *testing.T) {
	cases := []struct {
		s string
		b []byte
	}{
		{"1", []byte{0}},
		{"11", []byte{0, 0}},
		{"2", []byte{1}},
		{"z", []byte{57}},
		{"21", []byte{58}},
		{"5Q", []byte{255}},
		{"LUv", []byte{0xff, 0xff}},
		{"11111111111111111111111111111111", make([]byte, 32)},
		// "Hello World!" from the Bitcoin base58 test vectors.
		{"2NEpo7TZRRrLZSi2U", []byte("Hello World!")},
	}
	for _, c := range cases {
		if got := Base58Encode(c.b); got != c.s {
			t.Errorf("Base58Encode(%x) = %q, want %q", c.b, got, c.s)
		}
		got, err := Base58Decode(c.s)
		if err != nil || !bytes.Equal(got, c.b) {
			t.Errorf("Base58Decode(%q) = %x, %v; want %x", c.s, got, err, c.b)
		}
	}
}

func TestBase58RoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 500; i++ {
		b := make([]byte, r.IntN(70))
		for j := range b {
			b[j] = byte(r.IntN(256))
			if r.IntN(5) == 0 {
				b[j] = 0 // exercise leading and inner zeros
			}
		}
		s := Base58Encode(b)
		if len(b) == 0 {
			continue
		}
		got, err := Base58Decode(s)
		if err != nil || !bytes.Equal(got, b) {
			t.Fatalf("round trip of %x via %q gave %x, %v", b, s, got, err)
		}
	}
}

func TestBase58DecodeRefusesBadInput(t *testing.T) {
	for _, s := range []string{"", "0", "O", "I", "l", "abc+", " 1", "1 ", "é", strings.Repeat("2", 129)} {
		if b, err := Base58Decode(s); err == nil {
			t.Errorf("Base58Decode(%q) = %x, want an error", s, b)
		}
	}
}

func TestParsePublicKey(t *testing.T) {
	k, err := ParsePublicKey(Mainnet.USDCMint)
	if err != nil {
		t.Fatal(err)
	}
	if k.String() != Mainnet.USDCMint {
		t.Fatalf("String() = %s", k)
	}
	// 31 and 33 bytes, and not base58 at all.
	for _, s := range []string{Base58Encode(make([]byte, 31)), Base58Encode(bytes.Repeat([]byte{7}, 33)), "not-an-address"} {
		if _, err := ParsePublicKey(s); err == nil {
			t.Errorf("ParsePublicKey(%q) succeeded", s)
		}
	}
}
