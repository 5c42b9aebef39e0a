package x402

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func TestDecodeRecordedHeader(t *testing.T) {
	r := loadRecorded(t)["paid"]
	p, err := DecodePaymentHeader(r.Header)
	if err != nil {
		t.Fatal(err)
	}
	if p.X402Version != 2 || p.Resource == nil || !strings.HasSuffix(p.Resource.URL, "/scan") {
		t.Fatalf("decoded %+v", p)
	}
	if p.Accepted.Amount != "10000" || p.Accepted.FeePayer() != r.Requirements.FeePayer() {
		t.Fatalf("accepted %+v", p.Accepted)
	}
	raw, _ := base64.StdEncoding.DecodeString(r.Header)
	if !bytes.Equal(p.Raw, raw) {
		t.Fatal("Raw is not the header's JSON byte for byte")
	}
	// Without padding, as some clients send it.
	if _, err := DecodePaymentHeader(strings.TrimRight(r.Header, "=")); err != nil {
		t.Fatalf("unpadded header: %v", err)
	}
}

func TestDecodePaymentHeaderRefuses(t *testing.T) {
	good := `{"x402Version":2,"accepted":{"scheme":"exact","network":"solana:x"},"payload":{"transaction":"AAAA"}}`
	if _, err := DecodePaymentHeader(b64(good)); err != nil {
		t.Fatalf("minimal valid header refused: %v", err)
	}
	cases := map[string]string{
		"empty":              "",
		"not base64":         "%%%not base64%%%",
		"too long":           strings.Repeat("A", MaxPaymentHeaderBytes+4),
		"not JSON":           b64("hello"),
		"JSON array":         b64(`[` + good + `]`),
		"JSON string":        b64(`"x"`),
		"null":               b64(`null`),
		"version 1":          b64(strings.Replace(good, `"x402Version":2`, `"x402Version":1`, 1)),
		"version as string":  b64(strings.Replace(good, `"x402Version":2`, `"x402Version":"2"`, 1)),
		"no version":         b64(strings.Replace(good, `"x402Version":2,`, ``, 1)),
		"no accepted":        b64(`{"x402Version":2,"payload":{"transaction":"AAAA"}}`),
		"no transaction":     b64(strings.Replace(good, `"transaction":"AAAA"`, `"tx":"AAAA"`, 1)),
		"transaction number": b64(strings.Replace(good, `"AAAA"`, `12`, 1)),
		"trailing data":      b64(good + `{}`),
		"truncated JSON":     b64(good[:len(good)-1]),
	}
	for name, h := range cases {
		if p, err := DecodePaymentHeader(h); err == nil {
			t.Errorf("%s: decoded %+v, want an error", name, p)
		} else if !strings.HasPrefix(err.Error(), "decoding payment header: ") {
			t.Errorf("%s: error %q lacks context", name, err)
		}
	}
}

func TestPaymentRequiredHeader(t *testing.T) {
	req, err := Mainnet.Requirements("10000", Mainnet.USDCMint, Devnet.USDCMint)
	if err != nil {
		t.Fatal(err)
	}
	pr := PaymentRequired{X402Version: 2, Error: "PAYMENT-SIGNATURE header is required",
		Resource: Resource{URL: "https://host/scan", Description: "prompt-injection scan", MimeType: "application/json"},
		Accepts:  []Requirements{req}}
	raw, err := base64.StdEncoding.DecodeString(pr.Header())
	if err != nil {
		t.Fatal(err)
	}
	// The field names are the protocol's, exactly.
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	acc := m["accepts"].([]any)[0].(map[string]any)
	for _, k := range []string{"scheme", "network", "amount", "asset", "payTo", "maxTimeoutSeconds", "extra"} {
		if _, ok := acc[k]; !ok {
			t.Errorf("accepts[0] lacks %q: %s", k, raw)
		}
	}
	res := m["resource"].(map[string]any)
	if m["x402Version"] != float64(2) || m["error"] == nil || res["mimeType"] != "application/json" || res["url"] != "https://host/scan" {
		t.Errorf("header JSON %s", raw)
	}
	if acc["extra"].(map[string]any)["feePayer"] != Devnet.USDCMint || acc["maxTimeoutSeconds"] != float64(60) {
		t.Errorf("accepts[0] = %v", acc)
	}
	back, err := DecodePaymentRequired(pr.Header())
	if err != nil || back.Accepts[0].Amount != "10000" || back.Error != pr.Error {
		t.Fatalf("round trip: %+v, %v", back, err)
	}
	// A value JSON cannot hold is an error from Encode and "" from Header.
	bad := pr
	bad.Accepts = []Requirements{{Extra: map[string]any{"f": func() {}}}}
	if _, err := bad.Encode(); err == nil || bad.Header() != "" {
		t.Fatal("unencodable extra was encoded")
	}
}

func TestNetworkRequirements(t *testing.T) {
	n, err := NetworkByName("solana-devnet")
	if err != nil || n != Devnet {
		t.Fatalf("NetworkByName(solana-devnet) = %v, %v", n, err)
	}
	if n, err := NetworkByName(Mainnet.CAIP2); err != nil || n != Mainnet {
		t.Fatalf("NetworkByName(CAIP2) = %v, %v", n, err)
	}
	if _, err := NetworkByName("ethereum"); err == nil {
		t.Fatal("unknown network accepted")
	}
	addr := Mainnet.USDCMint
	for name, args := range map[string][3]string{
		"zero amount":  {"0", addr, addr},
		"usd amount":   {"0.01", addr, addr},
		"bad payTo":    {"1", "x", addr},
		"bad feePayer": {"1", addr, ""},
	} {
		if _, err := Mainnet.Requirements(args[0], args[1], args[2]); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestMatch(t *testing.T) {
	fp := Devnet.USDCMint
	a, _ := Mainnet.Requirements("10000", Mainnet.USDCMint, fp)
	b, _ := Devnet.Requirements("10000", Mainnet.USDCMint, fp)
	offered := []Requirements{a, b}

	// The accepted copy went through JSON, as it does from a client, and the
	// client may add extra fields.
	accepted := roundTrip(t, b)
	accepted.Extra["clientNote"] = "hi"
	got, err := Match(accepted, offered)
	if err != nil {
		t.Fatal(err)
	}
	if got.Network != Devnet.CAIP2 || len(got.Extra) != 1 {
		t.Fatalf("matched %+v, want the server's devnet entry", got)
	}

	withNumber := a
	withNumber.Extra = map[string]any{"feePayer": fp, "decimals": 6}
	if _, err := Match(roundTrip(t, withNumber), []Requirements{withNumber}); err != nil {
		t.Fatalf("int extra vs decoded float64: %v", err)
	}

	changes := map[string]func(*Requirements){
		"scheme":        func(r *Requirements) { r.Scheme = "upto" },
		"network":       func(r *Requirements) { r.Network = "solana:other" },
		"amount":        func(r *Requirements) { r.Amount = "1" },
		"asset":         func(r *Requirements) { r.Asset = Devnet.USDCMint },
		"payTo":         func(r *Requirements) { r.PayTo = fp },
		"timeout":       func(r *Requirements) { r.MaxTimeoutSeconds = 3600 },
		"feePayer":      func(r *Requirements) { r.Extra["feePayer"] = Mainnet.USDCMint },
		"extra dropped": func(r *Requirements) { r.Extra = nil },
	}
	for name, change := range changes {
		acc := roundTrip(t, a)
		change(&acc)
		if got, err := Match(acc, offered); err == nil {
			t.Errorf("%s changed: matched %+v", name, got)
		}
	}
	if _, err := Match(roundTrip(t, a), nil); err == nil {
		t.Error("matched with nothing offered")
	}
}

func roundTrip(t *testing.T, r Requirements) Requirements {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var out Requirements
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSettleResponseHeader(t *testing.T) {
	s := SettleResponse{Success: true, Transaction: "sig", Network: Mainnet.CAIP2, Payer: "payer"}
	raw, _ := base64.StdEncoding.DecodeString(s.Header())
	want := `{"success":true,"payer":"payer","transaction":"sig","network":"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"}`
	if string(raw) != want {
		t.Fatalf("PAYMENT-RESPONSE JSON %s, want %s", raw, want)
	}
	f := SettleResponse{ErrorReason: ReasonDuplicateSettlement, Network: Mainnet.CAIP2}
	back, err := DecodePaymentResponse(f.Header())
	if err != nil || back.Success || back.ErrorReason != ReasonDuplicateSettlement {
		t.Fatalf("round trip: %+v, %v", back, err)
	}
	if _, err := DecodePaymentResponse("%%"); err == nil {
		t.Fatal("garbage decoded")
	}

	// What the facilitator adds is passed on; unusable extensions are
	// dropped, never the record.
	for _, c := range []struct {
		name string
		ext  map[string]json.RawMessage
		want string
	}{
		{"amount and extensions", map[string]json.RawMessage{"x-receipt": json.RawMessage(`{"id":"r1"}`)},
			`{"success":true,"transaction":"sig","network":"n","amount":"10000","extensions":{"x-receipt":{"id":"r1"}}}`},
		{"broken extension", map[string]json.RawMessage{"x-receipt": json.RawMessage(`{`)},
			`{"success":true,"transaction":"sig","network":"n","amount":"10000"}`},
	} {
		s := SettleResponse{Success: true, Transaction: "sig", Network: "n", Amount: "10000", Extensions: c.ext}
		raw, _ := base64.StdEncoding.DecodeString(s.Header())
		if string(raw) != c.want {
			t.Errorf("%s: %s, want %s", c.name, raw, c.want)
		}
	}
}
