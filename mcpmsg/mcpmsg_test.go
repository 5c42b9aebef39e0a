package mcpmsg

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/promptwall/promptwall/llmreq"
)

func paths(b *Body) []string {
	var out []string
	for _, t := range b.Doc.Texts {
		out = append(out, t.Path+"="+t.Value)
	}
	return out
}

func TestParseKinds(t *testing.T) {
	for _, tc := range []struct {
		body   string
		kinds  []Kind
		ids    []string
		method string
		cursor string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"c2"}}`, []Kind{Request}, []string{"1"}, "tools/list", "c2"},
		{`{"jsonrpc":"2.0","id":"a","method":"ping"}`, []Kind{Request}, []string{`"a"`}, "ping", ""},
		{` { "jsonrpc" : "2.0" , "id" : "\u0061" , "method" : "p\u0069ng", "method": "tools/list", "params": {"cursor": 1, "x": {"cursor": "no"}, "cursor": "c\"}"}} `, []Kind{Request}, []string{`"a"`}, "tools/list", `c"}`},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, []Kind{Notification}, []string{""}, "notifications/initialized", ""},
		{`{"jsonrpc":"2.0","id":7,"result":{}}`, []Kind{Response}, []string{"7"}, "", ""},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, []Kind{ErrorReply}, []string{"null"}, "", ""},
		{` [{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"}]`, []Kind{Request, Notification}, []string{"1", ""}, "a", ""},
	} {
		b, err := Parse([]byte(tc.body))
		if err != nil {
			t.Fatalf("%s: %v", tc.body, err)
		}
		if len(b.Messages) != len(tc.kinds) {
			t.Fatalf("%s: %d messages", tc.body, len(b.Messages))
		}
		for i, m := range b.Messages {
			if m.Kind != tc.kinds[i] || string(m.ID) != tc.ids[i] {
				t.Errorf("%s: message %d is %v id %s", tc.body, i, m.Kind, m.ID)
			}
		}
		if m := b.Messages[0]; m.Method != tc.method || m.Cursor != tc.cursor {
			t.Errorf("%s: method %q cursor %q", tc.body, m.Method, m.Cursor)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct {
		body string
		err  error
	}{
		{``, ErrInvalidJSON},
		{`{"jsonrpc":"2.0","id":1,"method":"a"`, ErrInvalidJSON},
		{`{"jsonrpc":"2.0","id":1,"method":"a"} x`, ErrInvalidJSON},
		{`{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":2,"method":"a"}`, ErrInvalidJSON},
		{` {"jsonrpc":"2.0","id":1,"method":"a"} , "x" `, ErrInvalidJSON},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\xff\"}", ErrInvalidUTF8},
		{`{"jsonrpc":"1.0","id":1,"method":"a"}`, ErrNotJSONRPC},
		{`{"id":1,"method":"a"}`, ErrNotJSONRPC},
		{`{"jsonrpc":"2.0","id":{},"method":"a"}`, ErrNotJSONRPC},
		{`{"jsonrpc":"2.0","id":null,"method":"a"}`, ErrNotJSONRPC},
		{`{"jsonrpc":"2.0","id":1}`, ErrNotJSONRPC},
		{`{"jsonrpc":"2.0","id":1,"result":{},"error":{}}`, ErrNotJSONRPC},
		{`{"jsonrpc":"2.0","result":{}}`, ErrNotJSONRPC},
		{`{"jsonrpc":"2.0","id":1,"method":7}`, ErrNotJSONRPC},
		{`[]`, ErrNotJSONRPC},
		{`[1]`, ErrNotJSONRPC},
		{`"x"`, ErrNotJSONRPC},
		{strings.Repeat("[", 600) + strings.Repeat("]", 600), ErrTooLarge},
	} {
		if _, err := Parse([]byte(tc.body)); !errors.Is(err, tc.err) {
			t.Errorf("%.60s: %v, want %v", tc.body, err, tc.err)
		}
	}
}

func TestTexts(t *testing.T) {
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{0, 1, 2, 0xff, 0x80}, 200)...)
	img := base64.StdEncoding.EncodeToString(png)
	textBlob := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("plain words here ", 30)))
	for _, tc := range []struct {
		name, body string
		want       []string
	}{
		{"tool list", `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"add","description":"Adds.","inputSchema":{"type":"object","properties":{"a":{"type":"number"}}}}]}}`,
			[]string{"result.tools#key=tools", "result.tools[0].name#key=name", "result.tools[0].name=add", "result.tools[0].description#key=description", "result.tools[0].description=Adds.",
				"result.tools[0].inputSchema#key=inputSchema", "result.tools[0].inputSchema.type#key=type", "result.tools[0].inputSchema.type=object",
				"result.tools[0].inputSchema.properties#key=properties", "result.tools[0].inputSchema.properties.a#key=a",
				"result.tools[0].inputSchema.properties.a.type#key=type", "result.tools[0].inputSchema.properties.a.type=number"}},
		{"request params, not the envelope", `{"jsonrpc":"2.0","id":"idtext","method":"tools/call","extra":"no","params":{"name":"n"}}`,
			[]string{"params.name#key=name", "params.name=n"}},
		{"error", `{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"m","data":"d"}}`,
			[]string{"error.code#key=code", "error.message#key=message", "error.message=m", "error.data#key=data", "error.data=d"}},
		{"batch", `[{"jsonrpc":"2.0","method":"x","params":{"a":"b"}},{"jsonrpc":"2.0","id":3,"result":"r"}]`,
			[]string{"[0].params.a#key=a", "[0].params.a=b", "[1].result=r"}},
		{"image data is not a text", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"image","mimeType":"image/png","data":"` + img + `"}]}}`,
			[]string{"result.content#key=content", "result.content[0].type#key=type", "result.content[0].type=image",
				"result.content[0].mimeType#key=mimeType", "result.content[0].mimeType=image/png", "result.content[0].data#key=data"}},
		{"a text blob is a text", `{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"u","blob":"` + textBlob + `"}]}}`,
			[]string{"result.contents#key=contents", "result.contents[0].uri#key=uri", "result.contents[0].uri=u",
				"result.contents[0].blob#key=blob", "result.contents[0].blob=" + textBlob}},
		{"escaped payload key", `{"jsonrpc":"2.0","id":1,"r\u0065sult":{"x":"y"}}`,
			[]string{"result.x#key=x", "result.x=y"}},
	} {
		b, err := Parse([]byte(tc.body))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := paths(b)
		// Keys of the payload members themselves are harmless; the
		// lists above name all of them.
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

func TestRewrite(t *testing.T) {
	body := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"bad words"}],"n":1.50}}`
	b, err := Parse([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(b.Doc.Texts, func(t2 llmreq.Text) bool { return t2.Path == "result.content[0].text" })
	if i < 0 || b.MessageOf(i) != 0 {
		t.Fatalf("text not found: %q", paths(b))
	}
	out := b.Rewrite(map[int]string{i: "good \"words\""}, nil)
	want := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"good \"words\""}],"n":1.50}}`
	if string(out) != want {
		t.Errorf("got %s", out)
	}
	if got := b.Rewrite(nil, nil); string(got) != body {
		t.Errorf("unchanged: %s", got)
	}
}

func TestErrorResponses(t *testing.T) {
	data := &ErrorData{Code: "c", Rules: []string{"R1"}}
	one := ErrorResponse(json.RawMessage(`"x"`), -32090, "m", data)
	if string(one) != `{"jsonrpc":"2.0","id":"x","error":{"code":-32090,"message":"m","data":{"code":"c","rules":["R1"]}}}` {
		t.Errorf("%s", one)
	}
	if null := ErrorResponse(nil, -32700, "p", nil); string(null) != `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"p"}}` {
		t.Errorf("%s", null)
	}
	batch := ErrorBatch([]json.RawMessage{json.RawMessage("1"), json.RawMessage("2")}, true, -1, "m", nil)
	b, err := Parse(batch)
	if err != nil || len(b.Messages) != 2 || b.Messages[1].Kind != ErrorReply || string(b.Messages[1].ID) != "2" {
		t.Errorf("%s: %v", batch, err)
	}
	if MethodLabel("tools/call") != "tools/call" || MethodLabel("x/evil text") != "other" {
		t.Error("MethodLabel")
	}
}
