package x402

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Extension keys this package knows (specs/extensions/bazaar.md,
// specs/extensions/payment_identifier.md).
const (
	ExtensionBazaar            = "bazaar"
	ExtensionPaymentIdentifier = "payment-identifier"
)

// Bounds of a payment identifier (payment_identifier.md, "id Format").
const (
	MinPaymentIDLength = 16
	MaxPaymentIDLength = 128
)

// jsonSchemaDialect is the JSON Schema draft every extension schema names.
const jsonSchemaDialect = "https://json-schema.org/draft/2020-12/schema"

// Extension is the standard shape of one entry of an extensions object
// (x402-specification-v2.md section 5.1.2): data and the JSON Schema that
// validates it.
type Extension struct {
	Info   json.RawMessage `json:"info"`
	Schema json.RawMessage `json:"schema"`
}

// paymentIDSchema is the schema payment_identifier.md gives, verbatim in
// meaning: clients echo it back, so it must stay what the spec says.
var paymentIDSchema = json.RawMessage(`{"$schema":"` + jsonSchemaDialect + `","type":"object",` +
	`"properties":{"required":{"type":"boolean"},"id":{"type":"string","minLength":16,"maxLength":128}},` +
	`"required":["required"]}`)

// PaymentIdentifierExtension is the payment-identifier advertisement for
// PaymentRequired.Extensions: required says whether a client must send an
// id (a server that sets it answers 400 to a payment without one).
func PaymentIdentifierExtension(required bool) json.RawMessage {
	b, _ := json.Marshal(Extension{
		Info:   json.RawMessage(fmt.Sprintf(`{"required":%t}`, required)),
		Schema: paymentIDSchema,
	})
	return b
}

// PaymentIdentifier is the idempotency id a client attached to its payment
// (extensions["payment-identifier"].info.id). present reports whether the
// payload carries an id at all; err is set when it does but the id, or the
// extension around it, is malformed: not 16 to 128 characters of
// [A-Za-z0-9_-]. A client that only echoed the advertisement, without an
// id, has none: ("", false, nil).
func PaymentIdentifier(p *PaymentPayload) (id string, present bool, err error) {
	if p == nil {
		return "", false, nil
	}
	raw, ok := p.Extensions[ExtensionPaymentIdentifier]
	if !ok || isJSONNull(raw) {
		return "", false, nil
	}
	var ext struct {
		Info map[string]json.RawMessage `json:"info"`
	}
	if err := json.Unmarshal(raw, &ext); err != nil {
		return "", true, fmt.Errorf("payment-identifier extension: not an object with an info object: %w", err)
	}
	rawID, ok := ext.Info["id"]
	if !ok || isJSONNull(rawID) {
		return "", false, nil
	}
	if err := json.Unmarshal(rawID, &id); err != nil {
		return "", true, errors.New("payment-identifier extension: info.id is not a string")
	}
	if err := checkPaymentID(id); err != nil {
		return "", true, err
	}
	return id, true, nil
}

// checkPaymentID applies payment_identifier.md's id format. The characters
// are ASCII, so the length in bytes is the length in characters.
func checkPaymentID(id string) error {
	if n := len(id); n < MinPaymentIDLength || n > MaxPaymentIDLength {
		return fmt.Errorf("payment-identifier: id is %d characters, want %d to %d", n, MinPaymentIDLength, MaxPaymentIDLength)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return fmt.Errorf("payment-identifier: id has %q at %d; only letters, digits, '-' and '_' are allowed", c, i)
		}
	}
	return nil
}

func isJSONNull(b json.RawMessage) bool { return string(bytes.TrimSpace(b)) == "null" }

// BazaarEndpoint describes a POST endpoint that takes and returns JSON, for
// the bazaar discovery extension. Each field is a JSON object.
type BazaarEndpoint struct {
	BodyExample   json.RawMessage // an example request body
	BodySchema    json.RawMessage // the JSON Schema of the request body
	OutputExample json.RawMessage // an example 200 answer
	OutputSchema  json.RawMessage // the JSON Schema of the 200 answer
}

// BazaarJSONPost builds the bazaar extension (bazaar.md, "Example: POST
// Endpoint") of e: info holds the examples, schema validates info with the
// body schema as input.body and the output schema as output.example, the
// shape the reference declareDiscoveryExtension gives a JSON body method.
// The schemas must be self-contained: bazaar.md forbids references a
// facilitator would have to fetch, so any $ref or $id must start with '#'.
func BazaarJSONPost(e BazaarEndpoint) (json.RawMessage, error) {
	for _, f := range []struct {
		name string
		v    json.RawMessage
	}{{"body example", e.BodyExample}, {"body schema", e.BodySchema}, {"output example", e.OutputExample}, {"output schema", e.OutputSchema}} {
		var obj map[string]any
		if err := json.Unmarshal(f.v, &obj); err != nil || obj == nil {
			return nil, fmt.Errorf("bazaar extension: the %s is not a JSON object", f.name)
		}
		if err := localRefsOnly(obj); err != nil {
			return nil, fmt.Errorf("bazaar extension: the %s: %w", f.name, err)
		}
	}
	var outSchema map[string]json.RawMessage
	json.Unmarshal(e.OutputSchema, &outSchema) // an object: checked above
	outSchema["type"] = json.RawMessage(`"object"`)

	type obj = map[string]any
	info := obj{
		"input":  obj{"type": "http", "method": "POST", "bodyType": "json", "body": e.BodyExample},
		"output": obj{"type": "json", "example": e.OutputExample},
	}
	schema := obj{
		"$schema": jsonSchemaDialect,
		"type":    "object",
		"properties": obj{
			"input": obj{
				"type": "object",
				"properties": obj{
					"type":     obj{"type": "string", "const": "http"},
					"method":   obj{"type": "string", "enum": []string{"POST"}},
					"bodyType": obj{"type": "string", "enum": []string{"json", "form-data", "text"}},
					"body":     e.BodySchema,
				},
				"required":             []string{"type", "method", "bodyType", "body"},
				"additionalProperties": false,
			},
			"output": obj{
				"type": "object",
				"properties": obj{
					"type":    obj{"type": "string"},
					"example": outSchema,
				},
				"required": []string{"type"},
			},
		},
		"required": []string{"input"},
	}
	ib, err := json.Marshal(info)
	if err != nil {
		return nil, fmt.Errorf("bazaar extension: %w", err)
	}
	sb, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("bazaar extension: %w", err)
	}
	return json.Marshal(Extension{Info: ib, Schema: sb})
}

// localRefsOnly refuses a $ref or $id anywhere in v that is not a
// same-document fragment.
func localRefsOnly(v any) error {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if k == "$ref" || k == "$id" {
				s, ok := x.(string)
				if !ok || len(s) == 0 || s[0] != '#' {
					return fmt.Errorf("%s %v is not a same-document reference", k, x)
				}
			}
			if err := localRefsOnly(x); err != nil {
				return err
			}
		}
	case []any:
		for _, x := range t {
			if err := localRefsOnly(x); err != nil {
				return err
			}
		}
	}
	return nil
}
