package x402

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// headerWith is a recorded-shape payment header whose JSON has extensions
// set to ext (raw JSON), or no extensions key when ext is "".
func headerWith(t *testing.T, ext string) string {
	t.Helper()
	p := newPayment(t)
	m := map[string]any{
		"x402Version": 2,
		"resource":    Resource{URL: "http://localhost/scan"},
		"accepted":    p.req,
		"payload":     map[string]string{"transaction": "AQID"},
	}
	if ext != "" {
		m["extensions"] = json.RawMessage(ext)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b64(string(b))
}

func TestDecodePaymentHeaderExtensions(t *testing.T) {
	cases := []struct {
		name, ext string
		ok        bool
		keys      []string
	}{
		{"absent", "", true, nil},
		{"null", `null`, true, nil},
		{"empty", `{}`, true, nil},
		{"echo with id", `{"payment-identifier":{"info":{"required":false,"id":"pay_7d5d747be160e280"}},"bazaar":{"info":{}}}`, true, []string{"bazaar", "payment-identifier"}},
		{"unknown extension of any shape", `{"x-other":[1,2]}`, true, []string{"x-other"}},
		{"a string", `"payment-identifier"`, false, nil},
		{"an array", `[{"info":{}}]`, false, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := DecodePaymentHeader(headerWith(t, c.ext))
			if (err == nil) != c.ok {
				t.Fatalf("err = %v, want ok %v", err, c.ok)
			}
			if err != nil {
				return
			}
			var keys []string
			for k := range p.Extensions {
				keys = append(keys, k)
			}
			if len(keys) > 1 && keys[0] > keys[1] {
				keys[0], keys[1] = keys[1], keys[0]
			}
			if !reflect.DeepEqual(keys, c.keys) {
				t.Fatalf("extension keys %v, want %v", keys, c.keys)
			}
		})
	}
}

func TestPaymentIdentifier(t *testing.T) {
	const good = "pay_7d5d747be160e280504c099d984bcfe0"
	cases := []struct {
		name, ext string
		id        string
		present   bool
		errPart   string
	}{
		{"no extensions", "", "", false, ""},
		{"echo without id", `{"payment-identifier":{"info":{"required":false},"schema":{}}}`, "", false, ""},
		{"id null", `{"payment-identifier":{"info":{"required":false,"id":null}}}`, "", false, ""},
		{"extension null", `{"payment-identifier":null}`, "", false, ""},
		{"good id", `{"payment-identifier":{"info":{"required":false,"id":"` + good + `"}}}`, good, true, ""},
		{"16 characters", `{"payment-identifier":{"info":{"id":"abcdefghijklmnop"}}}`, "abcdefghijklmnop", true, ""},
		{"128 characters", `{"payment-identifier":{"info":{"id":"` + strings.Repeat("A-_9", 32) + `"}}}`, strings.Repeat("A-_9", 32), true, ""},
		{"15 characters", `{"payment-identifier":{"info":{"id":"abcdefghijklmno"}}}`, "", true, "15 characters"},
		{"129 characters", `{"payment-identifier":{"info":{"id":"` + strings.Repeat("a", 129) + `"}}}`, "", true, "129 characters"},
		{"a dot", `{"payment-identifier":{"info":{"id":"pay.7d5d747be160e280"}}}`, "", true, "'.'"},
		{"a space", `{"payment-identifier":{"info":{"id":"pay 7d5d747be160e280"}}}`, "", true, "' '"},
		{"non-ASCII", `{"payment-identifier":{"info":{"id":"pay_é7d5d747be160e280"}}}`, "", true, "only letters"},
		{"a number", `{"payment-identifier":{"info":{"id":12345678901234567}}}`, "", true, "not a string"},
		{"info not an object", `{"payment-identifier":{"info":"pay_7d5d747be160e280"}}`, "", true, "info object"},
		{"extension not an object", `{"payment-identifier":"pay_7d5d747be160e280"}`, "", true, "info object"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := DecodePaymentHeader(headerWith(t, c.ext))
			if err != nil {
				t.Fatal(err)
			}
			id, present, err := PaymentIdentifier(p)
			if id != c.id || present != c.present {
				t.Fatalf("PaymentIdentifier = %q, %v, %v; want %q, %v", id, present, err, c.id, c.present)
			}
			if c.errPart == "" && err != nil || c.errPart != "" && (err == nil || !strings.Contains(err.Error(), c.errPart)) {
				t.Fatalf("err = %v, want one containing %q", err, c.errPart)
			}
		})
	}
	if id, present, err := PaymentIdentifier(nil); id != "" || present || err != nil {
		t.Fatalf("nil payload: %q %v %v", id, present, err)
	}
}

func TestPaymentIdentifierExtension(t *testing.T) {
	for _, required := range []bool{false, true} {
		pr := PaymentRequired{X402Version: 2, Resource: Resource{URL: "http://h/scan"},
			Extensions: map[string]json.RawMessage{ExtensionPaymentIdentifier: PaymentIdentifierExtension(required)}}
		back, err := DecodePaymentRequired(pr.Header())
		if err != nil {
			t.Fatal(err)
		}
		var ext struct {
			Info struct {
				Required *bool `json:"required"`
			} `json:"info"`
			Schema struct {
				Schema     string `json:"$schema"`
				Properties struct {
					ID struct {
						Type      string `json:"type"`
						MinLength int    `json:"minLength"`
						MaxLength int    `json:"maxLength"`
					} `json:"id"`
				} `json:"properties"`
				Required []string `json:"required"`
			} `json:"schema"`
		}
		if err := json.Unmarshal(back.Extensions[ExtensionPaymentIdentifier], &ext); err != nil {
			t.Fatal(err)
		}
		id := ext.Schema.Properties.ID
		if ext.Info.Required == nil || *ext.Info.Required != required || ext.Schema.Schema != jsonSchemaDialect ||
			id.Type != "string" || id.MinLength != 16 || id.MaxLength != 128 || !reflect.DeepEqual(ext.Schema.Required, []string{"required"}) {
			t.Fatalf("required=%v: advertisement %s", required, back.Extensions[ExtensionPaymentIdentifier])
		}
	}
}

func TestPaymentRequiredWithoutExtensionsHasNoKey(t *testing.T) {
	b, err := json.Marshal(PaymentRequired{X402Version: 2})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "extensions") {
		t.Fatalf("%s", b)
	}
}

func TestBazaarJSONPost(t *testing.T) {
	e := BazaarEndpoint{
		BodyExample:   json.RawMessage(`{"text":"hello"}`),
		BodySchema:    json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","maxLength":8000}},"required":["text"]}`),
		OutputExample: json.RawMessage(`{"verdict":"safe"}`),
		OutputSchema:  json.RawMessage(`{"properties":{"verdict":{"$ref":"#/$defs/v"}},"$defs":{"v":{"enum":["safe"]}}}`),
	}
	raw, err := BazaarJSONPost(e)
	if err != nil {
		t.Fatal(err)
	}
	var ext struct {
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
			Schema     string `json:"$schema"`
			Properties struct {
				Input struct {
					Properties struct {
						Method struct{ Enum []string }
						Body   json.RawMessage
					}
					Required             []string
					AdditionalProperties *bool
				}
				Output struct {
					Properties struct{ Example map[string]json.RawMessage }
				}
			}
			Required []string
		}
	}
	if err := json.Unmarshal(raw, &ext); err != nil {
		t.Fatal(err)
	}
	in, s := ext.Info.Input, ext.Schema
	switch {
	case in.Type != "http" || in.Method != "POST" || in.BodyType != "json":
		t.Errorf("info.input %+v", in)
	case string(in.Body) != string(e.BodyExample) || string(ext.Info.Output.Example) != string(e.OutputExample) || ext.Info.Output.Type != "json":
		t.Errorf("examples not carried: %s", raw)
	case s.Schema != jsonSchemaDialect || !reflect.DeepEqual(s.Required, []string{"input"}):
		t.Errorf("schema header: %s", raw)
	case string(s.Properties.Input.Properties.Body) != string(e.BodySchema):
		t.Errorf("input.body schema %s", s.Properties.Input.Properties.Body)
	case !reflect.DeepEqual(s.Properties.Input.Properties.Method.Enum, []string{"POST"}) ||
		!reflect.DeepEqual(s.Properties.Input.Required, []string{"type", "method", "bodyType", "body"}) ||
		s.Properties.Input.AdditionalProperties == nil || *s.Properties.Input.AdditionalProperties:
		t.Errorf("input schema: %s", raw)
	case string(s.Properties.Output.Properties.Example["type"]) != `"object"` || s.Properties.Output.Properties.Example["$defs"] == nil:
		t.Errorf("output.example schema: %v", s.Properties.Output.Properties.Example)
	}

	bad := []struct {
		name   string
		change func(*BazaarEndpoint)
	}{
		{"body example is an array", func(e *BazaarEndpoint) { e.BodyExample = json.RawMessage(`[1]`) }},
		{"body schema missing", func(e *BazaarEndpoint) { e.BodySchema = nil }},
		{"output example is a string", func(e *BazaarEndpoint) { e.OutputExample = json.RawMessage(`"safe"`) }},
		{"output schema is null", func(e *BazaarEndpoint) { e.OutputSchema = json.RawMessage(`null`) }},
		{"external $ref", func(e *BazaarEndpoint) {
			e.BodySchema = json.RawMessage(`{"properties":{"text":{"$ref":"https://example.com/s.json"}}}`)
		}},
		{"external $id deep in an array", func(e *BazaarEndpoint) {
			e.OutputSchema = json.RawMessage(`{"anyOf":[{"$id":"file:///etc/passwd"}]}`)
		}},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			e2 := e
			c.change(&e2)
			if raw, err := BazaarJSONPost(e2); err == nil {
				t.Fatalf("built %s", raw)
			}
		})
	}
}
