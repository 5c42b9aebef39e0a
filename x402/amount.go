package x402

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// USDCAmount converts a USD price written in decimal ("0.01") into atomic
// USDC units ("10000"). It parses the decimal exactly (no floating point) and
// refuses more than 6 decimals, zero, signs, exponents, spaces and anything
// that is not plain ASCII digits with at most one '.'.
func USDCAmount(usd string) (string, error) {
	whole, frac, hasDot := strings.Cut(usd, ".")
	if usd == "" {
		return "", errors.New("price is empty")
	}
	if whole == "" || (hasDot && frac == "") {
		return "", fmt.Errorf("price %q: want digits on both sides of the '.' (like 0.01)", usd)
	}
	if !allDigits(whole) || !allDigits(frac) {
		return "", fmt.Errorf("price %q is not a plain decimal number of dollars (like 0.01)", usd)
	}
	if len(frac) > USDCDecimals {
		return "", fmt.Errorf("price %q has more than %d decimals, below USDC's smallest unit", usd, USDCDecimals)
	}
	digits := strings.TrimLeft(whole+frac+strings.Repeat("0", USDCDecimals-len(frac)), "0")
	if digits == "" {
		return "", fmt.Errorf("price %q must be greater than zero", usd)
	}
	if _, err := strconv.ParseUint(digits, 10, 64); err != nil {
		return "", fmt.Errorf("price %q is too large", usd)
	}
	return digits, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// parseUnits reads an atomic amount as the protocol writes it: a decimal
// string of a positive integer that fits in a u64, without sign or leading
// zeros (so that the string comparison of Match and the number agree).
func parseUnits(s string) (uint64, error) {
	if s == "" || !allDigits(s) || (len(s) > 1 && s[0] == '0') {
		return 0, fmt.Errorf("amount %q is not a canonical decimal integer", s)
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("amount %q does not fit in 64 bits", s)
	}
	if v == 0 {
		return 0, errors.New("amount must be greater than zero")
	}
	return v, nil
}
