package x402

import (
	"errors"
	"fmt"
)

// Solana addresses, signatures and secrets are written in base58 with the
// Bitcoin alphabet: leading zero bytes become leading '1's.
const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

var base58Index = func() [256]int8 {
	var t [256]int8
	for i := range t {
		t[i] = -1
	}
	for i := 0; i < len(base58Alphabet); i++ {
		t[base58Alphabet[i]] = int8(i)
	}
	return t
}()

// maxBase58Len bounds the input of Base58Decode: the decoder is quadratic and
// nothing this package reads (addresses, 64-byte secrets and signatures) is
// longer than 88 characters.
const maxBase58Len = 128

// Base58Encode encodes b in Solana's base58.
func Base58Encode(b []byte) string {
	zeros := 0
	for zeros < len(b) && b[zeros] == 0 {
		zeros++
	}
	// log(256)/log(58) < 1.37: enough room for the digits.
	digits := make([]byte, 0, len(b)*138/100+1)
	for _, c := range b[zeros:] {
		carry := int(c)
		for i := range digits {
			carry += int(digits[i]) << 8
			digits[i] = byte(carry % 58)
			carry /= 58
		}
		for carry > 0 {
			digits = append(digits, byte(carry%58))
			carry /= 58
		}
	}
	out := make([]byte, zeros+len(digits))
	for i := 0; i < zeros; i++ {
		out[i] = '1'
	}
	for i, d := range digits {
		out[len(out)-1-i] = base58Alphabet[d]
	}
	return string(out)
}

// Base58Decode decodes Solana's base58. It refuses empty input, characters
// outside the alphabet and inputs longer than 128 characters.
func Base58Decode(s string) ([]byte, error) {
	if s == "" {
		return nil, errors.New("empty base58 string")
	}
	if len(s) > maxBase58Len {
		return nil, fmt.Errorf("base58 string of %d characters is longer than %d", len(s), maxBase58Len)
	}
	zeros := 0
	for zeros < len(s) && s[zeros] == '1' {
		zeros++
	}
	bytes := make([]byte, 0, len(s))
	for i := zeros; i < len(s); i++ {
		v := base58Index[s[i]]
		if v < 0 {
			return nil, fmt.Errorf("invalid base58 character %q at offset %d", s[i], i)
		}
		carry := int(v)
		for j := range bytes {
			carry += int(bytes[j]) * 58
			bytes[j] = byte(carry)
			carry >>= 8
		}
		for carry > 0 {
			bytes = append(bytes, byte(carry))
			carry >>= 8
		}
	}
	out := make([]byte, zeros+len(bytes))
	for i, c := range bytes {
		out[len(out)-1-i] = c
	}
	return out, nil
}

// PublicKey is a 32-byte Solana address.
type PublicKey [32]byte

// String is the base58 form.
func (k PublicKey) String() string { return Base58Encode(k[:]) }

// ParsePublicKey decodes a base58 Solana address, which must be 32 bytes.
func ParsePublicKey(s string) (PublicKey, error) {
	var k PublicKey
	b, err := Base58Decode(s)
	if err != nil {
		return k, fmt.Errorf("decoding address %q: %w", s, err)
	}
	if len(b) != 32 {
		return k, fmt.Errorf("address %q decodes to %d bytes, want 32", s, len(b))
	}
	copy(k[:], b)
	return k, nil
}

func mustPublicKey(s string) PublicKey {
	k, err := ParsePublicKey(s)
	if err != nil {
		panic(err) // only for the compile-time constants below
	}
	return k
}
