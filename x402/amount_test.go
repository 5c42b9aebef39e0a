package x402

import "testing"

func TestUSDCAmount(t *testing.T) {
	ok := map[string]string{
		"0.01":                  "10000",
		"1":                     "1000000",
		"1.5":                   "1500000",
		"0.000001":              "1",
		"000.10":                "100000",
		"12.345678":             "12345678",
		"18446744073709.551615": "18446744073709551615",
	}
	for in, want := range ok {
		got, err := USDCAmount(in)
		if err != nil || got != want {
			t.Errorf("USDCAmount(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	bad := []string{"", "0", "0.0", "0.000000", "0.0000001", "1.0000000", "-1", "+1", "1e3",
		"1.", ".5", "1..2", "1.2.3", " 1", "1 ", "1,5", "NaN", "Inf", "0x10", "١", "$1",
		"18446744073709.551616", "99999999999999999999"}
	for _, in := range bad {
		if got, err := USDCAmount(in); err == nil {
			t.Errorf("USDCAmount(%q) = %q, want an error", in, got)
		}
	}
}

func TestParseUnits(t *testing.T) {
	if v, err := parseUnits("10000"); err != nil || v != 10000 {
		t.Fatalf("parseUnits(10000) = %d, %v", v, err)
	}
	for _, in := range []string{"", "0", "010", "-1", "1.0", "18446744073709551616", " 1"} {
		if _, err := parseUnits(in); err == nil {
			t.Errorf("parseUnits(%q) succeeded", in)
		}
	}
}
