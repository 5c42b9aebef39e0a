// Package scanservice is the standalone scan service of the published
// rulebook as a Caddy HTTP handler, http.handlers.prompt_scan: GET /rules,
// the free POST /precheck and the paid POST /scan (x402 version 2, exact
// scheme on Solana), both as MCP tools at /mcp (mcp.go), and when enabled
// a page to try the scan in a browser at /playground (playground.go).
//
// The submitted text lives only in memory for the length of its request:
// it is never logged, never a metric label, never written to the store.
package scanservice

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/promptwall/promptwall/caddymodule/enginepool"
	"github.com/promptwall/promptwall/caddymodule/stores"
	"github.com/promptwall/promptwall/engine"
	"github.com/promptwall/promptwall/mcp"
	"github.com/promptwall/promptwall/x402"
)

func init() {
	caddy.RegisterModule(Handler{})
}

// Defaults of the configuration.
const (
	DefaultPrice              = "0.01"
	DefaultPrecheckDailyLimit = 100
	DefaultPrecheckInterval   = 5 * time.Second
)

// Caps of the published input contract (rulebook input_contract.caps).
const (
	MaxBodyBytes  = 65536
	MaxTextUnits  = 8000
	resourceDescr = "prompt-injection scan"
)

// Handler is the scan service, http.handlers.prompt_scan. Requests whose
// path ends in /rules, /precheck, /scan or /mcp (and /playground when
// Playground is on) are answered here; every other request goes to the
// next handler, so the service can live under any prefix and share a site
// with other routes.
type Handler struct {
	// PayTo is the merchant's Solana wallet (base58, 32 bytes) that
	// receives the USDC. Required unless Free.
	PayTo string `json:"pay_to,omitempty"`

	// Network is "solana" (mainnet, the default) or "solana-devnet"; it
	// picks the CAIP-2 id and the USDC mint of the payment requirements.
	Network string `json:"network,omitempty"`

	// Facilitator verifies and settles payments. Required unless Free.
	Facilitator *FacilitatorConfig `json:"facilitator,omitempty"`

	// FeePayer is the facilitator's fee-payer address offered to clients
	// (extra.feePayer). Default: asked from the facilitator's /supported
	// when first needed, and cached for ten minutes.
	FeePayer string `json:"fee_payer,omitempty"`

	// RPC is a Solana JSON-RPC endpoint of the network, read (never sent
	// to) to learn the fate of a payment whose settlement was in flight
	// when the server stopped: it finds the transaction by its message at
	// finalized commitment, or proves it can no longer land. Without it
	// such a payment is settled again through the facilitator, which may
	// not be able to tell; then it is marked failed after 15 minutes and
	// logged for the operator. Placeholders such as {env.SOLANA_RPC} are
	// replaced at start. Default: none. Recommended for every paid service.
	RPC string `json:"rpc,omitempty"`

	// Price of one scan in US dollars, as a decimal string paid in USDC
	// (6 decimals). Default "0.01".
	Price string `json:"price,omitempty"`

	// Free serves full scans without payment and writes no ledger row; for
	// internal deployments.
	Free bool `json:"free,omitempty"`

	// PrecheckDailyLimit is how many free pre-checks one caller wallet gets
	// per UTC day. Default 100; -1 means no daily limit.
	PrecheckDailyLimit int `json:"precheck_daily_limit,omitempty"`

	// PrecheckInterval is the minimum time between two pre-checks of one
	// caller wallet. Default 5s; a negative duration means none.
	PrecheckInterval caddy.Duration `json:"precheck_interval,omitempty"`

	// PrecheckAddressDailyLimit is how many free pre-checks one client
	// address gets per UTC day, whatever wallets it names: an IPv4
	// address, or an IPv6 /64. The address is Caddy's client IP, so
	// behind a proxy list it in the server's trusted_proxies. Default
	// 1000; -1 means no address limit.
	PrecheckAddressDailyLimit int `json:"precheck_address_daily_limit,omitempty"`

	// PrecheckSignIn lets callers prove their wallet with x402's
	// sign-in-with-x (Solana ed25519): a proven pre-check counts against
	// the wallet alone, not its address. Default: off.
	PrecheckSignIn *SignInConfig `json:"precheck_sign_in,omitempty"`

	// StoreRaw is the backend that holds the ledger, the pre-check
	// counters and the used payment keys: a promptwall.stores module named
	// by "driver", "sqlite" (one server) or "postgres" (several servers
	// sharing one database). Default: SQLite at promptwall/scan.db in
	// Caddy's data directory.
	StoreRaw json.RawMessage `json:"store,omitempty" caddy:"namespace=promptwall.stores inline_key=driver"`

	// Rulebook is a rulebook file. Default: the embedded published v1.
	Rulebook string `json:"rulebook,omitempty"`

	// CORSOrigins are the origins whose pages may call the service from a
	// browser: "*" for any, or a list such as ["https://app.example.com"].
	// Default ["*"] (cors.go says why).
	CORSOrigins []string `json:"cors_origins,omitempty"`

	// Playground serves a page at the path ending in /playground (GET and
	// HEAD) where a user pastes a text and sees the verdict, each match
	// highlighted in place and the sanitized copy. It loads nothing but
	// itself and calls this service: POST /scan when Free, else the free
	// POST /precheck, which gives the verdict only. Default: off, and that
	// path goes to the next handler.
	Playground bool `json:"playground,omitempty"`

	engine      *enginepool.Handle
	rulesETag   string
	extensions  map[string]json.RawMessage // of every 402: built once, read only
	store       *sharedStore
	holders     *users // the config and the requests in flight that hold engine and store
	fac         *x402.Facilitator
	chain       *x402.ChainClient // nil without RPC
	network     x402.Network
	amount      string // price in USDC units, e.g. "10000"
	amountUnits uint64
	limit       int
	interval    time.Duration
	addrLimit   int     // 0: no address limit
	signIn      *signIn // nil: sign-in is off
	feePayers   *feePayerCache
	mcpServer   *mcp.Server
	playground  *playground // nil unless Playground
	metrics     *metrics
	logger      *zap.Logger
	now         func() time.Time
	pruneEvery  time.Duration // tests shorten it
	// reconcileEvery is how often payments left in flight are looked at
	// (default reconcileEvery); tests shorten it.
	reconcileEvery time.Duration
}

// FacilitatorConfig is where and how the facilitator is reached.
type FacilitatorConfig struct {
	// URL is the facilitator's base URL; /supported, /verify and /settle
	// are below it. Placeholders such as {env.X} are replaced at start.
	URL string `json:"url,omitempty"`

	// Headers are sent with every request to the facilitator, e.g. an
	// Authorization header. Values may hold placeholders such as
	// {env.FACILITATOR_KEY}, so a secret need not be written in the config.
	Headers http.Header `json:"headers,omitempty"`

	// Timeout bounds one /supported or /verify call; a call that takes
	// longer counts as the facilitator being unavailable (503).
	// Default 10s.
	Timeout caddy.Duration `json:"timeout,omitempty"`

	// SettleTimeout bounds one /settle call, which waits for the
	// transaction to be confirmed on chain. When it runs out the answer is
	// 503 and the payment stays used, since it may still land.
	// Default 45s.
	SettleTimeout caddy.Duration `json:"settle_timeout,omitempty"`
}

// CaddyModule returns the Caddy module information.
func (Handler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.prompt_scan",
		New: func() caddy.Module { return new(Handler) },
	}
}

// Provision sets up the handler: the shared engine, the store, the
// facilitator client and the metrics.
func (h *Handler) Provision(ctx caddy.Context) error {
	if h.logger == nil { // tests may bring their own
		h.logger = ctx.Logger()
	}
	if h.now == nil {
		h.now = time.Now
	}
	h.feePayers = new(feePayerCache)
	repl := caddy.NewReplacer()
	h.PayTo = repl.ReplaceAll(h.PayTo, "")
	h.FeePayer = repl.ReplaceAll(h.FeePayer, "")

	if h.Network == "" {
		h.Network = "solana"
	}
	network, err := x402.NetworkByName(h.Network)
	if err != nil {
		return fmt.Errorf("prompt_scan: network: %w", err)
	}
	h.network = network
	if h.Price == "" {
		h.Price = DefaultPrice
	}
	if h.amount, err = x402.USDCAmount(h.Price); err != nil {
		return fmt.Errorf("prompt_scan: price %q: %w", h.Price, err)
	}
	if h.amountUnits, err = strconv.ParseUint(h.amount, 10, 64); err != nil || h.amountUnits == 0 {
		return fmt.Errorf("prompt_scan: price %q: must be more than zero", h.Price)
	}
	switch {
	case h.PrecheckDailyLimit == 0:
		h.limit = DefaultPrecheckDailyLimit
	case h.PrecheckDailyLimit < 0:
		h.limit = 0 // the store's "no daily limit"
	default:
		h.limit = h.PrecheckDailyLimit
	}
	switch {
	case h.PrecheckInterval == 0:
		h.interval = DefaultPrecheckInterval
	case h.PrecheckInterval < 0:
		h.interval = 0
	default:
		h.interval = time.Duration(h.PrecheckInterval)
	}
	h.addrLimit = dailyLimit(h.PrecheckAddressDailyLimit, DefaultPrecheckAddressDailyLimit)
	if h.signIn, err = newSignIn(h.PrecheckSignIn, h.network, repl); err != nil {
		return fmt.Errorf("prompt_scan: %w", err)
	}

	if h.Facilitator != nil && h.Facilitator.URL != "" {
		hdr := http.Header{}
		for name, vals := range h.Facilitator.Headers {
			for _, v := range vals {
				hdr.Add(name, repl.ReplaceAll(v, ""))
			}
		}
		h.fac = &x402.Facilitator{
			URL:           strings.TrimSuffix(repl.ReplaceAll(h.Facilitator.URL, ""), "/"),
			Header:        hdr,
			Client:        &http.Client{}, // each call is bounded by its own context timeout
			Timeout:       time.Duration(h.Facilitator.Timeout),
			SettleTimeout: time.Duration(h.Facilitator.SettleTimeout),
		}
	}

	if h.RPC = repl.ReplaceAll(h.RPC, ""); h.RPC != "" {
		h.chain = &x402.ChainClient{URL: h.RPC, Client: &http.Client{}}
	}

	if h.engine, err = enginepool.Load(h.Rulebook); err != nil {
		return fmt.Errorf("prompt_scan: %w", err)
	}
	if h.extensions, err = offerExtensions(h.engine.Engine.Rulebook().ID); err != nil {
		return fmt.Errorf("prompt_scan: building the 402's extensions: %w", err)
	}
	sum := sha256.Sum256(h.engine.Engine.Rulebook().Raw)
	h.rulesETag = `"` + hex.EncodeToString(sum[:]) + `"`
	if h.mcpServer, err = h.newMCPServer(); err != nil {
		return fmt.Errorf("prompt_scan: %w", err)
	}
	if h.Playground {
		h.playground = newPlayground(h.Free, h.Price)
	}

	backend, err := h.loadStore(ctx)
	if err != nil {
		return fmt.Errorf("prompt_scan: %w", err)
	}
	if _, local := backend.(*stores.SQLite); !local && h.signIn != nil && h.PrecheckSignIn.Secret == "" {
		// A store shared by several servers means a load balancer: a
		// challenge made with this process's random key fails on the others.
		h.logger.Warn("precheck_sign_in has no secret: a challenge is only accepted by the server that made it; give every server the same secret")
	}
	if h.store, err = openShared(ctx, backend, h.logger); err != nil {
		return fmt.Errorf("prompt_scan: %w", err)
	}
	eng, st := h.engine, h.store
	h.holders = new(users)
	h.holders.start(func() error {
		eng.Release()
		return st.release()
	})
	go h.prune(ctx, h.store)
	if h.fac != nil && !h.Free {
		go h.reconcile(ctx)
	}

	if h.metrics, err = registerMetrics(ctx.GetMetricsRegistry()); err != nil {
		return fmt.Errorf("prompt_scan: registering metrics: %w", err)
	}
	if !h.Free && h.amountUnits > 1_000_000 {
		// @x402/fetch refuses to pay more than $1 unless its user
		// raised the cap: most clients would fail at this price.
		h.logger.Warn("prompt_scan price is above $1, which x402 clients refuse by default", zap.String("price", h.Price))
	}
	if h.Free {
		h.logger.Info("prompt_scan serves full scans free of charge", zap.String("rules_id", h.engine.Engine.Rulebook().ID))
	}
	return nil
}

// Validate checks the configuration before it goes live.
func (h *Handler) Validate() error {
	if !h.Free {
		if h.PayTo == "" {
			return errors.New("prompt_scan: pay_to is required unless free is set")
		}
		if h.fac == nil {
			return errors.New("prompt_scan: facilitator is required unless free is set")
		}
	}
	if h.PayTo != "" && !isAddress(h.PayTo) {
		return fmt.Errorf("prompt_scan: pay_to %q is not a Solana address (base58, 32 bytes)", h.PayTo)
	}
	if err := checkCORSOrigins(h.CORSOrigins); err != nil {
		return fmt.Errorf("prompt_scan: %w", err)
	}
	if h.FeePayer != "" && !isAddress(h.FeePayer) {
		return fmt.Errorf("prompt_scan: fee_payer %q is not a Solana address (base58, 32 bytes)", h.FeePayer)
	}
	if h.RPC != "" {
		if u, err := url.Parse(h.RPC); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("prompt_scan: rpc %q is not an http(s) URL", h.RPC)
		}
	}
	if h.fac != nil {
		u, err := url.Parse(h.fac.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("prompt_scan: facilitator url %q is not an http(s) URL", h.fac.URL)
		}
	}
	return nil
}

// Cleanup releases the engine and the store; both are shared, so a reload
// that keeps them does not close them.
//
// Requests still in flight keep both until they are done (lifetime.go):
// Caddy cleans a replaced config up while its server may still serve.
func (h *Handler) Cleanup() error {
	if h.holders == nil {
		// Provisioning stopped before the store: only the engine is held.
		if h.engine != nil {
			h.engine.Release()
		}
		return nil
	}
	return h.holders.release()
}

// ServeHTTP dispatches on the last path segment.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	var endpoint string
	switch lastSegment(r.URL.Path) {
	case "rules":
		endpoint = "rules"
	case "precheck":
		endpoint = "precheck"
	case "scan":
		endpoint = "scan"
	case "mcp":
		endpoint = "mcp"
	case "playground":
		if h.playground == nil {
			return next.ServeHTTP(w, r)
		}
		// A static page: no CORS, no engine, no store.
		sw := &statusWriter{ResponseWriter: w}
		h.servePlayground(sw, r)
		h.metrics.request("playground", sw.status())
		return nil
	default:
		return next.ServeHTTP(w, r)
	}
	sw := &statusWriter{ResponseWriter: w}
	if h.cors(sw, r, endpointMethods[endpoint]) { // a preflight, answered
		h.metrics.request(endpoint, sw.status())
		return nil
	}
	if h.holders == nil || !h.holders.acquire() {
		// The config is gone (a request that arrives after its cleanup).
		writeError(sw, http.StatusServiceUnavailable, codeStoreUnavailable, "the service is reloading; retry")
		h.metrics.request(endpoint, sw.status())
		return nil
	}
	defer h.holders.release()
	defer timeRequestStore(endpoint, &r)()
	switch endpoint {
	case "rules":
		h.serveRules(sw, r)
	case "precheck":
		h.servePrecheck(sw, r)
	case "scan":
		h.serveScan(sw, r)
	case "mcp":
		h.serveMCP(sw, r)
	}
	h.metrics.request(endpoint, sw.status())
	return nil
}

// lastSegment is the part of p after its last slash.
func lastSegment(p string) string {
	return p[strings.LastIndexByte(p, '/')+1:]
}

// scan runs the engine on a text already within the caps.
func (h *Handler) scan(text string) engine.Result {
	return h.engine.Engine.ScanString(text)
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Handler)(nil)
	_ caddy.Validator             = (*Handler)(nil)
	_ caddy.CleanerUpper          = (*Handler)(nil)
	_ caddyhttp.MiddlewareHandler = (*Handler)(nil)
)
