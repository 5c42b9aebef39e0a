package x402

import (
	"crypto/sha256"
	"errors"
	"fmt"

	"filippo.io/edwards25519"
)

// Program addresses the exact scheme involves.
var (
	TokenProgram             = mustPublicKey("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA")
	Token2022Program         = mustPublicKey("TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb")
	AssociatedTokenProgram   = mustPublicKey("ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL")
	ComputeBudgetProgram     = mustPublicKey("ComputeBudget111111111111111111111111111111")
	MemoProgram              = mustPublicKey("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr")
	LighthouseProgram        = mustPublicKey("L2TExMFKdjpN9kozasaurPirfHy9P8sbXoAN1qA3S95")
	errNoProgramAddressFound = errors.New("no off-curve program address for these seeds")
)

// onCurve reports whether b is the encoding of a point of edwards25519.
// A program-derived address must not be, so that no private key signs for
// it. (Solana's dalek check also accepts the 19 non-canonical y encodings
// that this one refuses; a sha256 output lands there with probability
// 2^-250, so the two agree in practice.)
func onCurve(b [32]byte) bool {
	_, err := new(edwards25519.Point).SetBytes(b[:])
	return err == nil
}

// FindProgramAddress derives a program address as Solana does:
// sha256(seeds || bump || program || "ProgramDerivedAddress"), trying the
// bump from 255 down and keeping the first result off the curve.
func FindProgramAddress(seeds [][]byte, program PublicKey) (PublicKey, uint8, error) {
	if len(seeds) > 15 {
		return PublicKey{}, 0, fmt.Errorf("%d seeds, at most 15 allowed", len(seeds))
	}
	for _, s := range seeds {
		if len(s) > 32 {
			return PublicKey{}, 0, fmt.Errorf("seed of %d bytes, at most 32 allowed", len(s))
		}
	}
	for bump := 255; bump >= 0; bump-- {
		h := sha256.New()
		for _, s := range seeds {
			h.Write(s)
		}
		h.Write([]byte{byte(bump)})
		h.Write(program[:])
		h.Write([]byte("ProgramDerivedAddress"))
		var k PublicKey
		h.Sum(k[:0])
		if !onCurve(k) {
			return k, uint8(bump), nil
		}
	}
	return PublicKey{}, 0, errNoProgramAddressFound
}

// AssociatedTokenAddress is the associated token account of owner for mint
// under tokenProgram (SPL Token or Token-2022).
func AssociatedTokenAddress(owner, tokenProgram, mint PublicKey) (PublicKey, error) {
	k, _, err := FindProgramAddress([][]byte{owner[:], tokenProgram[:], mint[:]}, AssociatedTokenProgram)
	if err != nil {
		return PublicKey{}, fmt.Errorf("deriving associated token account of %s: %w", owner, err)
	}
	return k, nil
}
