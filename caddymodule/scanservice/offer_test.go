package scanservice

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/promptwall/promptwall/x402"
)

// maxOfferHeader bounds the PAYMENT-REQUIRED header of a 402.
const maxOfferHeader = 3584

// wantExtensions are the extensions every 402 of /scan must carry.
func wantExtensions(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	ext, err := offerExtensions("prompt-injection-rules/v1")
	if err != nil {
		t.Fatal(err)
	}
	return ext
}

// givesResultAway reports whether an answer body carries a scan result.
// The 402's bazaar extension names the result's fields in its schema and
// example, so it is set aside; anything else that says "verdict" leaks.
func givesResultAway(body []byte) bool {
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) == nil {
		delete(top, "extensions")
		body, _ = json.Marshal(top)
	}
	return strings.Contains(string(body), "verdict")
}

func TestGivesResultAway(t *testing.T) {
	for body, want := range map[string]bool{
		`{"x402Version":2,"extensions":{"bazaar":{"info":{"output":{"example":{"verdict":"safe"}}}}}}`: false,
		`{"x402Version":2,"verdict":"safe"}`:                               true,
		`{"x402Version":2,"error":"verdict is malicious","extensions":{}}`: true,
		`not json, "verdict"`:                                              true,
	} {
		if got := givesResultAway([]byte(body)); got != want {
			t.Errorf("givesResultAway(%s) = %v", body, got)
		}
	}
}

// The 402 advertises payment-identifier (optional) and a bazaar
// description whose examples are what the service really takes and gives.
func TestOfferExtensions(t *testing.T) {
	f := newFakeFacilitator(t)
	th := paidHandler(t, f, nil)
	w := th.do(t, "POST", "http://scan.example.com/v1/scan", scanBody, nil)
	offer := offerOf(t, w)
	// A reverse proxy with 4 KiB header buffers (nginx's default on most
	// systems) must still pass the 402 with the other headers around it.
	if n := len(w.Header().Get("PAYMENT-REQUIRED")); n > maxOfferHeader {
		t.Errorf("PAYMENT-REQUIRED is %d bytes, more than %d", n, maxOfferHeader)
	}

	var pid struct {
		Info map[string]any `json:"info"`
	}
	if err := json.Unmarshal(offer.Extensions[x402.ExtensionPaymentIdentifier], &pid); err != nil || !reflect.DeepEqual(pid.Info, map[string]any{"required": false}) {
		t.Fatalf("payment-identifier %s (%v)", offer.Extensions[x402.ExtensionPaymentIdentifier], err)
	}

	var bz struct {
		Info struct {
			Input struct {
				Type, Method, BodyType string
				Body                   json.RawMessage
			}
			Output struct {
				Type    string
				Example json.RawMessage
			}
		}
		Schema struct {
			Properties struct {
				Input struct {
					Properties struct {
						Body struct {
							Properties struct {
								Text struct {
									Type      string
									MaxLength int
								}
							}
							Required []string
						}
					}
				}
			}
		}
	}
	if err := json.Unmarshal(offer.Extensions[x402.ExtensionBazaar], &bz); err != nil {
		t.Fatal(err)
	}
	in := bz.Info.Input
	if in.Type != "http" || in.Method != "POST" || in.BodyType != "json" || bz.Info.Output.Type != "json" {
		t.Fatalf("bazaar info %+v", bz.Info)
	}
	text := bz.Schema.Properties.Input.Properties.Body.Properties.Text
	if text.Type != "string" || text.MaxLength != MaxTextUnits || !slices.Equal(bz.Schema.Properties.Input.Properties.Body.Required, []string{"text"}) {
		t.Fatalf("body schema %+v", bz.Schema.Properties.Input.Properties.Body)
	}

	// The body example is accepted as it stands, and the output example
	// has exactly the fields of a real answer to it, in its order.
	free := freeHandler(t)
	res := free.do(t, "POST", "/scan", string(in.Body), nil)
	if res.Code != 200 {
		t.Fatalf("the bazaar body example gets %d %s", res.Code, res.Body)
	}
	var real, example map[string]any
	json.Unmarshal(res.Body.Bytes(), &real)
	if err := json.Unmarshal(bz.Info.Output.Example, &example); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(keysOf(real), keysOf(example)) || example["rules_id"] != real["rules_id"] || example["verdict"] != real["verdict"] {
		t.Fatalf("output example %v does not look like the answer %v", example, real)
	}
}

func keysOf(m map[string]any) []string {
	var k []string
	for key := range m {
		k = append(k, key)
	}
	slices.Sort(k)
	return k
}

// echo adds what a real client sends back to a payment header: the
// offered extensions, with extra added to their info.
func echo(t *testing.T, header string, offer x402.PaymentRequired, id string) string {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(header)
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	ext := map[string]any{}
	for k, v := range offer.Extensions {
		var e map[string]any
		json.Unmarshal(v, &e)
		if k == x402.ExtensionPaymentIdentifier && id != "" {
			e["info"].(map[string]any)["id"] = id
		}
		ext[k] = e
	}
	p["extensions"] = ext
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// A payment that echoes the extensions, as @x402/fetch does, is paid for
// like any other, and its header stays well within the header bound.
func TestPaymentEchoingExtensions(t *testing.T) {
	for _, id := range []string{"", "pay_7d5d747be160e280504c099d984bcfe0"} {
		t.Run("id="+id, func(t *testing.T) {
			f := newFakeFacilitator(t)
			th := paidHandler(t, f, nil)
			offer := ask(t, th)
			header := echo(t, payment(t, offer, nil), offer, id)
			if len(header) > x402.MaxPaymentHeaderBytes/2 {
				t.Errorf("an echoing payment header is %d bytes, over half the %d allowed", len(header), x402.MaxPaymentHeaderBytes)
			}
			p, err := x402.DecodePaymentHeader(header)
			if err != nil {
				t.Fatal(err)
			}
			if got, present, err := x402.PaymentIdentifier(p); got != id || present != (id != "") || err != nil {
				t.Fatalf("PaymentIdentifier = %q %v %v", got, present, err)
			}
			w := pay(t, th, header)
			if w.Code != 200 || f.count("/settle") != 1 || len(th.ledger(t)) != 1 {
				t.Fatalf("%d %s; settle calls %d", w.Code, w.Body, f.count("/settle"))
			}
		})
	}
}

// An x402 version 1 client (X-PAYMENT) is told version 2 is needed, with
// the version 2 offer; its header is neither verified nor settled.
func TestVersion1Client(t *testing.T) {
	f := newFakeFacilitator(t)
	th := paidHandler(t, f, nil)
	offer := ask(t, th)
	v2 := payment(t, offer, nil)
	cases := []struct {
		name   string
		hdr    http.Header
		status int
		reason string
	}{
		{"X-PAYMENT alone", http.Header{"X-Payment": {v2}}, 402, "x402 version 2 is required"},
		{"X-PAYMENT of junk", http.Header{"X-Payment": {"eyJ4NDAyVmVyc2lvbiI6MX0="}}, 402, "x402 version 2 is required"},
		{"neither header", nil, 402, "PAYMENT-SIGNATURE header is required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := th.do(t, "POST", "http://scan.example.com/v1/scan", scanBody, c.hdr)
			got := offerOf(t, w)
			if w.Code != c.status || !strings.HasPrefix(got.Error, c.reason) || got.X402Version != 2 || len(got.Accepts) != 1 {
				t.Fatalf("%d error %q", w.Code, got.Error)
			}
			if f.count("/verify") != 0 || f.count("/settle") != 0 || len(th.ledger(t)) != 0 {
				t.Fatalf("verify %d settle %d", f.count("/verify"), f.count("/settle"))
			}
		})
	}
	// Both headers: the version 2 payment is the one used.
	w := th.do(t, "POST", "http://scan.example.com/v1/scan", scanBody, http.Header{"X-Payment": {v2}, "Payment-Signature": {v2}})
	if w.Code != 200 || f.count("/settle") != 1 {
		t.Fatalf("both headers: %d %s", w.Code, w.Body)
	}
}
