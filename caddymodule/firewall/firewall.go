// Package firewall is the http.handlers.prompt_firewall middleware: placed in
// front of reverse_proxy to an LLM API, it reads each request body, finds the
// message texts (package llmreq), scans them with the rulebook's engine and
// blocks the request, forwards a sanitized copy, or only labels it.
//
// With the mcp option a route guards an MCP server instead: its requests
// are JSON-RPC over Streamable HTTP, scanned both ways (mcp.go,
// mcp_stream.go, mcp_answer.go), and what follows here does not apply.
//
// Choices the design leaves open, made here to fail closed:
//
//   - Any request with a body is scanned, whatever its method; requests
//     without a body pass unlabelled. A body is JSON whatever its
//     Content-Type says (several LLM servers parse JSON regardless of the
//     header), but for two forms. A multipart form has its text fields,
//     text files (JSON Lines files request by request) and PDFs scanned,
//     its media parts passed; a form with content outside its parts, or
//     with no part, is refused (multipart.go, formscan.go). A raw upload
//     (application/octet-stream, application/pdf, audio/*, image/*,
//     video/*, or Gemini and Ollama upload paths) that looks like JSON
//     (after any run of whitespace) is scanned as JSON; else its name,
//     type and bytes decide (filepart.go): text and PDF are scanned, media
//     that its bytes show to be media passes unscanned and unbuffered, and
//     anything else passes counted in Prompt-Firewall-Unscanned
//     (rawbody.go). A chunk of a split upload is scanned and counted too
//     (splitupload.go). Disagreeing Content-Type lines are refused with 400, a
//     charset other than UTF-8 or US-ASCII with 415 (bodyform.go).
//   - WebSocket upgrades are refused with 403 unless the websocket option
//     passes them or scans the client's messages (wsscan.go); other
//     upgrades and CONNECT tunnels always are. Realtime calls over WebRTC
//     and ephemeral keys for direct sessions are refused unless it passes
//     them (websocket.go).
//   - Content-Encoding gzip (x-gzip), deflate (zlib or raw), br and zstd
//     are decoded, stacked codings too; max_body bounds the body as sent and
//     again after each decoding. A blocked or sanitized body is never
//     forwarded encoded: a sanitized one goes upstream as identity.
//   - Refusals (413 too large, 400 invalid JSON or encoding, 415 unknown
//     encoding) and blocks answer in the API family's error shape (OpenAI's
//     for OpenAI and generic JSON; Anthropic's; Gemini's; Ollama's) with
//     X-Should-Retry: false. The family comes from the parsed API, or from
//     the path and the anthropic-version header when the body did not parse.
//   - The OpenAI error's param is the path of the first text that has the
//     request's verdict: the one that decided the action.
//   - Prompt-Firewall-Rules is omitted when no rule matched; any
//     Prompt-Firewall-* header or trailer a client sends is removed first,
//     and so is its name from the client's Connection and Trailer fields
//     (a proxy drops the fields Connection names). A rewritten body goes
//     without the client's body digests (headers.go).
//   - Metrics count unscanned requests as verdict "none" with action "pass",
//     and refusals as verdict "none" with action "refuse".
package firewall

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/promptwall/promptwall/bufpool"
	"github.com/promptwall/promptwall/caddymodule/enginepool"
	"github.com/promptwall/promptwall/engine"
	"github.com/promptwall/promptwall/llmreq"
)

func init() {
	caddy.RegisterModule(Firewall{})
}

// The actions a verdict can lead to (JSON and Caddyfile values).
const (
	ActionBlock    = "block"
	ActionSanitize = "sanitize"
	ActionLog      = "log"
)

// Values of {http.vars.prompt_firewall.action} besides the three actions.
const (
	actionPass   = "pass"   // safe, or a body that is not scanned (file upload)
	actionRefuse = "refuse" // refused before scanning: too large, bad JSON, bad encoding
)

// DefaultMaxBody is the default limit of a request body, before and after
// decoding its Content-Encoding: 16 MiB.
const DefaultMaxBody int64 = 16 << 20

// Upstream request headers set on every scanned request. Any a client sends
// are removed first, so the upstream can trust them.
const (
	HeaderVerdict  = "Prompt-Firewall-Verdict"
	HeaderRules    = "Prompt-Firewall-Rules"
	HeaderRulebook = "Prompt-Firewall-Rulebook"
	headerPrefix   = "Prompt-Firewall-"
)

// Names of the request variables, read as {http.vars.prompt_firewall.*}.
const (
	VarVerdict = "prompt_firewall.verdict"
	VarRules   = "prompt_firewall.rules"
	VarAction  = "prompt_firewall.action"
)

// Firewall is an HTTP middleware that scans the message texts of LLM API
// requests (OpenAI, Anthropic, Gemini, Ollama, or any JSON) with the
// prompt-injection rulebook before they reach the upstream.
//
// The request's verdict is the worst verdict of its scanned texts. A
// malicious request gets the on_malicious action, a suspicious one the
// on_suspicious action, a safe one goes on unchanged. Every scanned request
// goes upstream with the headers Prompt-Firewall-Verdict,
// Prompt-Firewall-Rules (when any rule matched) and Prompt-Firewall-Rulebook,
// and sets the placeholders {http.vars.prompt_firewall.verdict}, .rules and
// .action.
//
// Every request with a body is scanned, whatever its method; requests
// without one pass unlabelled. A multipart form has its text fields and
// text, JSON Lines and PDF files scanned; raw uploads of media pass
// unscanned and unbuffered: they are not message text. Every other body
// must be JSON, else the request is refused with 400: a firewall fails
// closed.
type Firewall struct {
	// Rulebook is the path of a rulebook file of the published schema.
	// Default: the embedded prompt-injection-rules/v1.
	Rulebook string `json:"rulebook,omitempty"`

	// OnMalicious is the action for a request whose worst text is malicious:
	// "block" (status 400 in the API's error shape, no upstream call),
	// "sanitize" (forward a copy with the matched spans replaced) or "log"
	// (forward unchanged, labelled). Default: "block".
	OnMalicious string `json:"on_malicious,omitempty"`

	// OnSuspicious is the action for a request whose worst text is
	// suspicious; same values as OnMalicious. Default: "sanitize".
	OnSuspicious string `json:"on_suspicious,omitempty"`

	// Roles lists the message roles whose texts are scanned: any of "user",
	// "tool", "function", "tool_definition" (tool names, descriptions and
	// schemas), "system", "developer", "assistant", or "all" for every
	// role. Texts whose role is unknown (the generic JSON fallback) are
	// always scanned. Default: ["user", "tool", "function",
	// "tool_definition"].
	Roles []string `json:"roles,omitempty"`

	// MaxBody is the largest request body accepted, in bytes; it bounds the
	// body as received and again after decoding its Content-Encoding. A
	// larger body is refused with 413. Default: 16777216 (16 MiB).
	MaxBody int64 `json:"max_body,omitempty"`

	// SafeCache is how many texts the safe-text cache holds (rounded up to
	// a power of two; 16 bytes each), or -1 for no cache. A text in which a
	// scan found no match is remembered by a keyed hash, per client (its
	// credentials and address), and not scanned again when that client sends
	// it again: a conversation's history, resent with every turn. Texts with
	// any match are scanned every time; no text is stored. Default: 65536.
	//
	// With the cache comes its memory of whole messages, one entry for
	// every 8 of the cache's: by a keyed hash of a body's first bytes, per
	// client, the runs of messages in them that held no text with a match,
	// so that a later body that begins with the same bytes (the same
	// conversation, one turn longer) is not parsed again up to there; and,
	// one entry for every 256 of the cache's, a client's last body's
	// messages by keyed hashes, so that a body that dropped its oldest
	// messages is not parsed again in the ones it kept.
	SafeCache int `json:"safe_cache,omitempty"`

	// RuleActions sets the action of one rule's matches, by rule id:
	// "block", "sanitize", "log" or "off" (its matches lead to no action,
	// but are still reported). It overrides CategoryActions, which overrides
	// on_malicious and on_suspicious (which apply by a match's severity). A
	// request takes the strongest action of its matches (block, then
	// sanitize, then log); a sanitized copy replaces the matches whose
	// action is sanitize or block, and keeps the others. The verdict header,
	// the logs and the metrics keep the rulebook's exact verdict. Each id
	// must be in the rulebook. Default: none.
	RuleActions map[string]string `json:"rule_actions,omitempty"`

	// CategoryActions sets the action of the matches of one category, by
	// category name, with the values of RuleActions. Each name must be in
	// the rulebook. Default: none.
	CategoryActions map[string]string `json:"category_actions,omitempty"`

	// WebSocket is what happens to a WebSocket upgrade (OpenAI Realtime,
	// Gemini Live): "refuse" (403, code websocket_not_scanned), "pass"
	// (forwarded unscanned and unlabelled), or "scan": every message the
	// client sends is held until it is whole and scanned (JSON as a request,
	// other text as one text, each at most max_body bytes); one whose
	// verdict's action is block or sanitize (frames are not rewritten)
	// closes the connection, and so does a frame that cannot be read. The
	// upstream is offered no compression then. Any other protocol upgrade or
	// CONNECT tunnel is refused whatever this says. The requests that set
	// up a session whose messages never pass here, a Realtime call over
	// WebRTC (.../realtime/calls) and the ephemeral keys for direct
	// connections (.../realtime/client_secrets, .../realtime/sessions,
	// .../realtime/transcription_sessions, Gemini .../auth_tokens), are
	// refused alike (403, code websocket_not_scanned) under "refuse" and
	// "scan", which cannot reach those messages; "pass" lets them through,
	// their bodies scanned as any other. With mcp only "refuse" is valid.
	// Default: "refuse".
	WebSocket string `json:"websocket,omitempty"`

	// MaxUpload is the largest multipart body accepted, in bytes (larger:
	// 413). A form streams into memory up to 1 MiB and into a temporary file
	// (in $TMPDIR, unlinked at once where the system allows it) past that,
	// to go upstream as it came; only the parts that are scanned (text
	// fields, text and PDF files) are held in memory, bounded by max_body
	// together. Default: 536870912 (512 MiB).
	MaxUpload int64 `json:"max_upload,omitempty"`

	// UnscannableFiles is what happens to a request that carries a file
	// the firewall cannot read: a document of a type other than text and
	// PDF (an office document, an archive), or one the provider fetches
	// from a URL. "pass": forwarded, with the header
	// Prompt-Firewall-Unscanned counting such files (and token-id prompts
	// let through); "refuse": 415, code unscannable_file. Images, audio
	// and video are not text and pass when their bytes are of a known
	// media format; a file declared as media that is not (and is not text:
	// mostly text past a short header is read as text) counts here. A file
	// name of a text or PDF type makes the file text or PDF whatever its
	// declared type. A chunk of a split upload (an OpenAI Upload part, a
	// Gemini resumable upload other than one "upload, finalize" at offset
	// 0) is scanned, and counts here too: the provider joins the chunks,
	// and the joined file is never scanned whole. A file that should be
	// readable and is not (invalid base64, a charset the scan cannot
	// decode, a PDF that does not open) is refused whatever this says.
	// Default: "pass".
	UnscannableFiles string `json:"unscannable_files,omitempty"`

	// TokenIDs is what happens to a prompt given as token ids (a legacy
	// completions prompt of integers, vLLM's prompt_embeds, Ollama's
	// context), which no scan can read: "refuse" (400, code
	// token_ids_not_scanned) or "pass" (forwarded, counted in
	// Prompt-Firewall-Unscanned). Embeddings input given as tokens is not
	// a prompt and is not counted. Default: "refuse".
	TokenIDs string `json:"token_ids,omitempty"`

	// ResponseOnMalicious is the action for a model's answer in which a
	// malicious match is found, for requests parsed as one of the LLM APIs
	// (OpenAI Chat, Responses and completions, Anthropic, Gemini, Ollama;
	// the generic JSON fallback and other bodies are not): "block" (a
	// stream ends with the API's own error event and no [DONE]; an answer
	// of which nothing was sent yet is replaced by the API's error with
	// 422, which no SDK retries), "sanitize" (the matched spans are
	// replaced in flight, each event kept valid; a match inside tool-call
	// arguments blocks instead, as a rewritten argument would no longer be
	// the JSON its tool reads), "log" (forwarded unchanged, logged) or
	// "off" (responses are not touched: not even wrapped). Responses are
	// the assistant's output: they are scanned whatever Roles says. Under
	// block and sanitize each event waits until the text in it is final
	// (a few bytes in prose; a URL or base64 run until it ends). An error
	// status passes unchanged; a compressed answer is decoded and sent on
	// as identity (buffered whole first, bounded by max_body); one that
	// cannot be framed or parsed, or whose text is over max_body, is
	// refused in the API's way. Default:
	// "off" in this release: turning it on changes what every existing
	// deployment's clients receive.
	ResponseOnMalicious string `json:"response_on_malicious,omitempty"`

	// ResponseOnSuspicious is the action for an answer whose worst match
	// is suspicious; same values and default ("off") as
	// ResponseOnMalicious. rule_actions and category_actions apply to
	// response matches too.
	ResponseOnSuspicious string `json:"response_on_suspicious,omitempty"`

	// MCP, when set, guards an MCP server instead of an LLM API: every
	// request of the route is JSON-RPC over MCP's Streamable HTTP, scanned
	// both ways with on_malicious, on_suspicious, rule and category (see
	// MCPOptions, mcp.go). Default: unset (the route is an LLM API).
	MCP *MCPOptions `json:"mcp,omitempty"`

	engine     *engine.Engine
	policy     *policy
	respPolicy *policy // nil: responses are not scanned
	handle     *enginepool.Handle
	rulesID    string
	roles      []string // scanned besides RoleUnknown; nil with allRoles
	allRoles   bool
	logger     *zap.Logger
	metrics    *metrics
	hosts      *hostLabels
	cache      *safeCache   // nil when off
	resume     *resumeTable // with cache
	pins       *toolPins    // nil unless mcp pin_tools
}

// CaddyModule returns the Caddy module information.
func (Firewall) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.prompt_firewall",
		New: func() caddy.Module { return new(Firewall) },
	}
}

// allRoleNames are the roles `roles all` scans, besides RoleUnknown.
var allRoleNames = []string{
	llmreq.RoleUser, llmreq.RoleTool, llmreq.RoleFunction, llmreq.RoleToolDefinition,
	llmreq.RoleSystem, llmreq.RoleDeveloper, llmreq.RoleAssistant,
}

// defaultRoles are the user-controlled and tool-returned roles: the ones
// an attacker writes into, and the tool definitions, which agents load
// from third-party MCP servers. System, developer and assistant texts come
// from the application itself.
var defaultRoles = []string{llmreq.RoleUser, llmreq.RoleTool, llmreq.RoleFunction, llmreq.RoleToolDefinition}

// Provision loads the (shared) engine, resolves defaults and registers the
// metrics.
func (f *Firewall) Provision(ctx caddy.Context) error {
	f.logger = ctx.Logger()
	if f.OnMalicious == "" {
		f.OnMalicious = ActionBlock
	}
	if f.OnSuspicious == "" {
		f.OnSuspicious = ActionSanitize
	}
	if f.MaxBody == 0 {
		f.MaxBody = DefaultMaxBody
	}
	if f.ResponseOnMalicious == "" {
		f.ResponseOnMalicious = ActionOff
	}
	if f.ResponseOnSuspicious == "" {
		f.ResponseOnSuspicious = ActionOff
	}
	if f.SafeCache == 0 {
		f.SafeCache = DefaultSafeCache
	}
	f.provisionBodyForms()
	if f.UnscannableFiles == "" {
		f.UnscannableFiles = UnscannedPass
	}
	if f.TokenIDs == "" {
		f.TokenIDs = UnscannedRefuse
	}
	// Per handler and config: a reload may change the rulebook, and with
	// it what is safe.
	f.cache, f.resume = nil, nil
	if f.SafeCache > 0 {
		f.cache = newSafeCache(f.SafeCache)
		f.resume = newResumeTable(max(f.SafeCache/resumeShare, 1))
	}
	roles := f.Roles
	if len(roles) == 0 {
		roles = defaultRoles
	}
	f.roles = nil
	for _, r := range roles {
		if r == "all" {
			f.allRoles = true
			continue
		}
		f.roles = append(f.roles, r)
	}

	// The compiled rulebook is shared by every handler and config that
	// names the same content, so a reload does not recompile it.
	h, err := enginepool.Load(f.Rulebook)
	if err != nil {
		return err
	}
	f.handle, f.engine = h, h.Engine
	f.rulesID = h.Engine.Rulebook().ID
	if f.policy, err = newPolicy(f, h.Engine.Rulebook()); err != nil {
		h.Release()
		return err
	}
	f.respPolicy = f.responsePolicy()
	f.pins = nil
	if f.MCP != nil && f.MCP.PinTools {
		f.pins = newToolPins()
	}

	if f.metrics, err = registerMetrics(ctx.GetMetricsRegistry()); err != nil {
		return err
	}
	// The server whose routes hold this handler; its host matchers are
	// provisioned before any handler is.
	srv, _ := ctx.Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server)
	f.hosts = newHostLabels(f.metrics, srv)
	return nil
}

// Validate checks the configuration after provisioning.
func (f *Firewall) Validate() error {
	for name, a := range map[string]string{"on_malicious": f.OnMalicious, "on_suspicious": f.OnSuspicious} {
		switch a {
		case ActionBlock, ActionSanitize, ActionLog:
		default:
			return fmt.Errorf("%s: unknown action %q (want block, sanitize or log)", name, a)
		}
	}
	for name, a := range map[string]string{"response_on_malicious": f.ResponseOnMalicious, "response_on_suspicious": f.ResponseOnSuspicious} {
		switch a {
		case "", ActionBlock, ActionSanitize, ActionLog, ActionOff:
		default:
			return fmt.Errorf("%s: unknown action %q (want block, sanitize, log or off)", name, a)
		}
	}
	if f.MaxBody < 0 {
		return fmt.Errorf("max_body must not be negative, got %d", f.MaxBody)
	}
	if err := f.validateBodyForms(); err != nil {
		return err
	}
	for name, v := range map[string]string{"unscannable_files": f.UnscannableFiles, "token_ids": f.TokenIDs} {
		if v != "" && v != UnscannedPass && v != UnscannedRefuse {
			return fmt.Errorf("%s: unknown value %q (want pass or refuse)", name, v)
		}
	}
	if f.SafeCache < -1 || f.SafeCache > maxSafeCache {
		return fmt.Errorf("safe_cache must be -1 (off) or up to %d entries, got %d", maxSafeCache, f.SafeCache)
	}
	for _, r := range f.Roles {
		if r != "all" && !isRole(r) {
			return fmt.Errorf("roles: unknown role %q (want %s or all)", r, strings.Join(allRoleNames, ", "))
		}
	}
	return nil
}

func isRole(r string) bool {
	for _, n := range allRoleNames {
		if r == n {
			return true
		}
	}
	return false
}

// Cleanup drops this config's reference to the shared engine.
func (f *Firewall) Cleanup() error {
	f.handle.Release()
	return nil
}

// scans reports whether texts of role are scanned. The list is a few
// words long: a loop over it is cheaper than a map's hashing, per text.
func (f *Firewall) scans(role string) bool {
	return role == llmreq.RoleUnknown || f.allRoles || slices.Contains(f.roles, role)
}

// ServeHTTP scans the request body, then blocks it, rewrites it or passes
// it on. The response is scanned only when a response action is on
// (response.go); else it streams from the upstream to the client untouched.
func (f *Firewall) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	// A client must not be able to forge the verdict the upstream sees.
	scrubClientHeaders(r)
	w, fe := f.upgrade(w, r)
	if fe != nil {
		return f.refuse(w, r, llmreq.FamilyOf(r.URL.Path, r.Header), fe)
	}
	if f.MCP != nil {
		return f.serveMCP(w, r, next) // mcp.go
	}

	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return f.pass(w, r, next)
	}

	fam := llmreq.FamilyOf(r.URL.Path, r.Header)
	form, fe := requestForm(r)
	if fe != nil {
		return f.refuse(w, r, fam, fe)
	}
	if splitUpload(r) {
		if f.UnscannableFiles == UnscannedRefuse {
			return f.refuse(w, r, fam, errSplitUpload)
		}
		form.unscanned = 1
	}
	switch form.kind {
	case bodyMultipart:
		return f.serveMultipart(w, r, next, fam, form)
	case bodyRaw:
		if done, err := f.serveRaw(w, r, next, fam, form); done {
			return err
		}
	}
	if r.ContentLength > f.MaxBody {
		return f.refuse(w, r, fam, tooLarge(f.MaxBody))
	}

	raw, body, decoded, err := readBody(r.Body, r.ContentLength, r.Header.Get("Content-Encoding"), f.MaxBody)
	if err != nil {
		var fe *failure
		if errors.As(err, &fe) {
			return f.refuse(w, r, fam, fe)
		}
		// The client went away or the connection broke mid-body.
		return caddyhttp.Error(http.StatusBadRequest, err)
	}
	// raw goes back to its pool when the request is done with it: here,
	// unless the upstream is sent raw itself (then upstreamBody does it).
	// Until then nothing may keep raw or body: the texts and results below
	// share their bytes.
	owned := true
	defer func() {
		if owned {
			bufpool.Put(raw)
		}
	}()
	if len(raw) == 0 {
		return f.pass(w, r, next)
	}
	scrubTrailers(r) // they came with the body's end
	if form.ascii && !isASCII(body) {
		return f.refuse(w, r, fam, errNotASCII)
	}

	start := time.Now()
	var client uint64
	var res *llmreq.Resume
	var sums *[]uint64
	var tr trim
	if f.cache != nil {
		client = f.cache.clientKey(r)
		sums = getSums()
		defer putSums(sums)
		*sums = f.resume.prefixes(*sums, client, r.URL.Path, body)
		res, tr = f.resume.lookup(client, r.URL.Path, *sums, body)
	}
	req, err := llmreq.ParseResumed(r.URL.Path, body, res)
	if err != nil {
		switch {
		case errors.Is(err, llmreq.ErrTooDeep):
			return f.refuse(w, r, fam, errTooDeep)
		case errors.Is(err, llmreq.ErrTooManyTexts), errors.Is(err, llmreq.ErrTooLarge):
			// Valid JSON the scanner will not index: refused, for its size.
			return f.refuse(w, r, fam, errTooManyTexts)
		}
		return f.refuse(w, r, fam, errInvalidJSON)
	}
	// The texts, like raw, are done with when the request is.
	defer req.Release()
	out := f.scan(req, client)
	defer out.release()
	out.unscanned += form.unscanned
	out.resumed = req.Skipped()
	if f.cache != nil && out.refusal == nil {
		f.resume.remember(client, r.URL.Path, *sums, body, req, dirtyTexts(out), tr)
	}
	hs := f.hosts.of(r)
	f.metrics.observeScan(phaseRequest, hs, time.Since(start), out)
	if out.refusal != nil {
		if req.API != llmreq.Generic {
			fam = req.API.Family()
		}
		return f.refuse(w, r, fam, out.refusal)
	}

	act, repl := out.act, map[int]string(nil)
	if act == doSanitize {
		repl, act = f.sanitize(req, out)
	}
	action := act.name()
	f.label(r, out, action)
	if out.verdict != engine.Safe {
		f.logFlagged(r, req, out, action)
	}

	f.metrics.request(phaseRequest, hs, out.verdict, action)
	switch action {
	case ActionBlock:
		if req.API != llmreq.Generic {
			fam = req.API.Family()
		}
		writeBlock(w, fam, out)
		return nil
	}
	// log, and pass for safe: the original bytes, still encoded if they
	// were, from their pooled buffer; sanitize: the original's bytes
	// between the new literals, or for a body that came encoded, the
	// rewritten copy from a buffer of its own.
	var ub *upstreamBody
	size := len(raw)
	switch {
	case action != ActionSanitize:
		ub, owned = newUpstreamBody(raw), false
	case decoded:
		up := req.AppendRewrite(bufpool.Get(len(body)+len(body)/16), repl, out.edits)
		ub, size = newUpstreamBody(up), len(up)
		markRewritten(r, decoded)
	default:
		lits, splices := req.AppendSplices(bufpool.Get(rewrittenSize(repl)), repl, out.edits)
		ub, size = spliceBody(raw, lits, splices)
		owned = false
		markRewritten(r, decoded)
	}
	setBodyReader(r, ub, size)
	err = f.next(w, r, next, req.API)
	ub.release()
	return err
}

// rewrittenSize is about the size of repl's literals: a first buffer for
// AppendSplices, big enough for a long text's edits that cannot be used
// (the literal is then written whole).
func rewrittenSize(repl map[int]string) int {
	n := 0
	for _, s := range repl {
		n += len(s) + len(s)/16 + 2
	}
	return n
}

// next calls the next handler, its response scanned when response actions are on.
func (f *Firewall) next(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler, api llmreq.API) (err error) {
	ww, rw := f.wrapResponse(w, r, api)
	if rw == nil {
		return next.ServeHTTP(w, r)
	}
	defer rw.release()
	defer func() {
		// reverse_proxy aborts with http.ErrAbortHandler on the write error that ends an
		// answered response: the answer is complete, so it ends cleanly (its stream's end,
		// a kept connection), not reset.
		if p := recover(); p != nil {
			if p != http.ErrAbortHandler || !rw.done {
				panic(p)
			}
			err = nil
		}
	}()
	err = next.ServeHTTP(ww, identityRequest(r))
	if rw.done && errors.Is(err, errDone) {
		err = nil
	}
	rw.finish()
	return err
}

// asciiEqualFold reports whether a and b are equal but for the case of
// ASCII letters.
func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// pass forwards a request that has nothing to scan.
func (f *Firewall) pass(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	caddyhttp.SetVar(r.Context(), VarAction, actionPass)
	f.metrics.request(phaseRequest, f.hosts.of(r), "none", actionPass)
	return next.ServeHTTP(w, r)
}

// label sets the upstream headers and the placeholders of a scanned request.
func (f *Firewall) label(r *http.Request, out *outcome, action string) {
	rules := strings.Join(out.rules, ",")
	// The names are in canonical form already: assigned, not Set, they
	// skip canonicalizing on every request.
	r.Header[HeaderVerdict] = []string{string(out.verdict)}
	r.Header[HeaderRulebook] = []string{f.rulesID}
	if rules != "" {
		r.Header[HeaderRules] = []string{rules}
	}
	if out.unscanned > 0 {
		r.Header[HeaderUnscanned] = []string{strconv.Itoa(out.unscanned)}
	}
	// One lookup of the vars map for the three (SetVar looks it up each
	// time), and the safe path's values boxed once.
	if vars, ok := r.Context().Value(caddyhttp.VarsCtxKey).(map[string]any); ok {
		vars[VarVerdict] = boxed(string(out.verdict))
		vars[VarRules] = boxed(rules)
		vars[VarAction] = boxed(action)
	}
}

// refuse answers a request that cannot be scanned: fail closed.
func (f *Firewall) refuse(w http.ResponseWriter, r *http.Request, fam string, fe *failure) error {
	caddyhttp.SetVar(r.Context(), VarAction, actionRefuse)
	f.metrics.request(phaseRequest, f.hosts.of(r), "none", actionRefuse)
	if c := f.logger.Check(zapcore.InfoLevel, "request refused"); c != nil {
		c.Write(zap.String("phase", string(phaseRequest)), zap.Int("status", fe.status), zap.String("reason", fe.code))
	}
	writeFailure(w, fam, fe)
	return nil
}

// The values of the vars on the safe path, as interfaces once: a string
// becomes an interface by an allocation (but the empty string).
var boxedSafe, boxedPass any = string(engine.Safe), actionPass

// boxed returns s as an interface, without an allocation for the safe
// path's values.
func boxed(s string) any {
	switch s {
	case string(engine.Safe):
		return boxedSafe
	case actionPass:
		return boxedPass
	}
	return s
}

// setBody replaces the request body with b, which the upstream is sent
// with a Content-Length (never chunked).
func setBody(r *http.Request, b []byte) {
	setBodyReader(r, readCloser{bytes.NewReader(b)}, len(b))
}

// setRewritten replaces the request body with its sanitized copy b: its
// digests no longer hold, and a body that came encoded goes on decoded, as
// identity.
func setRewritten(r *http.Request, b []byte, decoded bool) {
	setBody(r, b)
	markRewritten(r, decoded)
}

// markRewritten drops what no longer holds of a request whose body was
// rewritten.
func markRewritten(r *http.Request, decoded bool) {
	dropBodyDigests(r)
	if decoded {
		r.Header.Del("Content-Encoding")
	}
}

// setBodyReader replaces the request body with body, of n bytes.
func setBodyReader(r *http.Request, body io.ReadCloser, n int) {
	r.Body = body
	r.TransferEncoding = nil
	r.GetBody = nil
	if r.ContentLength == int64(n) && r.Header.Get("Content-Length") != "" {
		return // the client's header is right already
	}
	r.ContentLength = int64(n)
	r.Header.Set("Content-Length", strconv.Itoa(n))
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

// Interface guards
var (
	_ caddy.Provisioner           = (*Firewall)(nil)
	_ caddy.Validator             = (*Firewall)(nil)
	_ caddy.CleanerUpper          = (*Firewall)(nil)
	_ caddyhttp.MiddlewareHandler = (*Firewall)(nil)
)
