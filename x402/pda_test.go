package x402

import "testing"

// Vectors computed with findAssociatedTokenPda of @solana-program/token
// (the reference client's own derivation), including bumps below 255 that
// exercise the off-curve search.
func TestAssociatedTokenAddress(t *testing.T) {
	cases := []struct{ owner, program, mint, ata string }{
		{"E7n61YTVTkhW61xsR13o4pdMznB4JMFryn6h69kAJA9A", "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA", Mainnet.USDCMint, "3wX1EpjdXE1NxjgTmBY63Q3VWMJDhJ3vDPDBsBSvBPpf"},
		{"5Tp13pyCkkh5weXtR6VcHKTNVMzRcjDh9HQ2D48EPZLy", "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb", Mainnet.USDCMint, "HQucQWCHVQHsrbkJAgPgQYAFyFfN4P4Q5AUbNpKk91DS"},
		{"11111111111111111111111111111111", "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA", Devnet.USDCMint, "27SXXCACcdgCZLU5hwYYjCb4j22H4ovDpHooVJpAJtXw"},
		{"EhqAuDiUf9w2t1yroxQx1dGBViHACvgnRNueGqQXudub", "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA", Mainnet.USDCMint, "EzySW5ePgmD1kcaK3TU49DPGCQRPnAvUy5AtGRMnVKxQ"},
		{"4o5Kqusxb69sMf9yyXTnw1GgMjN4JX5W8yNYwnkRMrht", "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA", Mainnet.USDCMint, "AWivk9h3osLGnzeNBPaPVGsSwEjw7o8yYs4VKMDFu6Lu"},
	}
	for _, c := range cases {
		got, err := AssociatedTokenAddress(mustPublicKey(c.owner), mustPublicKey(c.program), mustPublicKey(c.mint))
		if err != nil || got.String() != c.ata {
			t.Errorf("ATA(%s, %s, %s) = %s, %v; want %s", c.owner, c.program, c.mint, got, err, c.ata)
		}
	}
}

func TestFindProgramAddressBumpAndCurve(t *testing.T) {
	owner := mustPublicKey("4o5Kqusxb69sMf9yyXTnw1GgMjN4JX5W8yNYwnkRMrht")
	mint := mustPublicKey(Mainnet.USDCMint)
	k, bump, err := FindProgramAddress([][]byte{owner[:], TokenProgram[:], mint[:]}, AssociatedTokenProgram)
	if err != nil || bump != 250 || k.String() != "AWivk9h3osLGnzeNBPaPVGsSwEjw7o8yYs4VKMDFu6Lu" {
		t.Fatalf("got %s bump %d, %v", k, bump, err)
	}
	if onCurve(k) {
		t.Fatal("a program address is on the curve")
	}
	// A wallet address is a public key: on the curve.
	if !onCurve(newWallet(t).pub) {
		t.Fatal("a wallet address is off the curve")
	}
	if _, _, err := FindProgramAddress([][]byte{make([]byte, 33)}, AssociatedTokenProgram); err == nil {
		t.Fatal("a 33-byte seed was accepted")
	}
	if _, _, err := FindProgramAddress(make([][]byte, 16), AssociatedTokenProgram); err == nil {
		t.Fatal("16 seeds were accepted")
	}
}
