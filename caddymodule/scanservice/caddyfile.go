package scanservice

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/promptwall/promptwall/caddymodule/nearest"
	"github.com/promptwall/promptwall/caddymodule/stores"
)

func init() {
	httpcaddyfile.RegisterHandlerDirective("prompt_scan", parseCaddyfile)
	// The service answers its endpoints itself, like respond, so it
	// orders itself just before respond: no order line needed, and
	// rewrites, headers and request_body still run first.
	httpcaddyfile.RegisterDirectiveOrder("prompt_scan", httpcaddyfile.Before, "respond")
}

func parseCaddyfile(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	var hd Handler
	err := hd.UnmarshalCaddyfile(h.Dispenser)
	return &hd, err
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens. Syntax:
//
//	prompt_scan {
//		pay_to       <solana address>
//		network      solana|solana-devnet
//		facilitator  <url> [header <name> <value>]... {
//			header         <name> <value>
//			timeout        <duration>
//			settle_timeout <duration>
//		}
//		fee_payer    <solana address>
//		rpc          <url>
//		price        <usd>
//		free
//		precheck_daily_limit <n>|unlimited
//		precheck_interval    <duration>|none
//		precheck_address_daily_limit <n>|unlimited
//		precheck_sign_in <origin> [secret <secret>]
//		store        sqlite <file> | postgres <dsn> | <driver> <args>...
//		rulebook     <file>
//		cors_origins *|<origin>...
//		playground
//	}
//
// store names a promptwall.stores backend and hands it the rest of the
// line: `store sqlite <file>` for one server, `store postgres <dsn>` (such
// as `store postgres {env.DATABASE_URL}`) for several sharing one database.
//
// precheck_sign_in turns on wallet proofs (x402 sign-in-with-x) for
// pre-checks; origin is the service's public origin as clients see it.
//
// playground, on its own line, serves a page to try the scan in a browser
// at the path ending in /playground: full results when free, else the
// verdict of the free pre-check.
//
// pay_to is required unless free is given, on its own line. The money path
// fails closed: an empty pay_to (`pay_to ""`, which is what
// `pay_to "{$WALLET}"` gives when WALLET is unset) is an error, never a free
// service. An empty facilitator URL means none (and a paid service then
// fails validation).
//
// Defaults: network solana (mainnet), price 0.01, precheck_daily_limit 100,
// precheck_interval 5s, precheck_address_daily_limit 1000 (per IPv4
// address or IPv6 /64, per UTC day), store sqlite at promptwall/scan.db in
// Caddy's data directory, the embedded v1 rulebook, facilitator timeout 10s,
// settle_timeout 45s and cors_origins * (pages of any origin may call the
// service; a list such as https://app.example.com restricts them).
func (h *Handler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // consume directive name
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		switch d.Val() {
		case "pay_to":
			if !d.AllArgs(&h.PayTo) {
				return d.ArgErr()
			}
			if h.PayTo == "" {
				return d.Err("pay_to is empty (an unset environment variable?): give the Solana wallet that receives the USDC, or write free on its own line for a service without payment")
			}
		case "network":
			if !d.AllArgs(&h.Network) {
				return d.ArgErr()
			}
			if h.Network != "solana" && h.Network != "solana-devnet" {
				return d.Errf("unknown network '%s' (solana or solana-devnet)", h.Network)
			}
		case "facilitator":
			if err := h.unmarshalFacilitator(d); err != nil {
				return err
			}
		case "fee_payer":
			if !d.AllArgs(&h.FeePayer) {
				return d.ArgErr()
			}
		case "rpc":
			if !d.AllArgs(&h.RPC) {
				return d.ArgErr()
			}
		case "price":
			if !d.AllArgs(&h.Price) {
				return d.ArgErr()
			}
		case "free":
			if d.NextArg() {
				return d.ArgErr()
			}
			h.Free = true
		case "precheck_daily_limit", "precheck_address_daily_limit":
			opt := d.Val()
			var v string
			if !d.AllArgs(&v) {
				return d.ArgErr()
			}
			n := -1
			if v != "unlimited" {
				var err error
				if n, err = strconv.Atoi(v); err != nil || n <= 0 {
					return d.Errf("%s '%s' must be a positive number or 'unlimited'", opt, v)
				}
			}
			if opt == "precheck_daily_limit" {
				h.PrecheckDailyLimit = n
			} else {
				h.PrecheckAddressDailyLimit = n
			}
		case "precheck_interval":
			var v string
			if !d.AllArgs(&v) {
				return d.ArgErr()
			}
			if v == "none" || v == "0" {
				h.PrecheckInterval = -1
				continue
			}
			dur, err := caddy.ParseDuration(v)
			if err != nil || dur < 0 {
				return d.Errf("precheck_interval '%s' must be a duration or 'none'", v)
			}
			h.PrecheckInterval = caddy.Duration(dur)
		case "precheck_sign_in":
			cfg := &SignInConfig{}
			if !d.NextArg() {
				return d.ArgErr()
			}
			cfg.Origin = d.Val()
			if d.NextArg() {
				if d.Val() != "secret" || !d.NextArg() {
					return d.Err("precheck_sign_in: expected 'secret <secret>' after the origin")
				}
				cfg.Secret = d.Val()
			}
			if d.NextArg() {
				return d.ArgErr()
			}
			h.PrecheckSignIn = cfg
		case "store":
			if !d.NextArg() {
				return d.ArgErr()
			}
			driver := d.Val()
			id := stores.Namespace + "." + driver
			if _, err := caddy.GetModule(id); err != nil {
				return d.Errf("unknown store driver '%s' (known: %s)", driver, strings.Join(stores.Drivers(), ", "))
			}
			unm, err := caddyfile.UnmarshalModule(d, id)
			if err != nil {
				return err
			}
			h.StoreRaw = caddyconfig.JSONModuleObject(unm, "driver", driver, nil)
		case "rulebook":
			if !d.AllArgs(&h.Rulebook) {
				return d.ArgErr()
			}
		case "cors_origins":
			h.CORSOrigins = d.RemainingArgs()
			if len(h.CORSOrigins) == 0 {
				return d.ArgErr()
			}
			if err := checkCORSOrigins(h.CORSOrigins); err != nil {
				return d.Err(err.Error())
			}
		case "playground":
			if d.NextArg() {
				return d.ArgErr()
			}
			h.Playground = true
		default:
			return d.Errf("unrecognized prompt_scan subdirective '%s'%s", d.Val(), nearest.Hint(d.Val(), subdirectives))
		}
	}
	return nil
}

// unmarshalFacilitator parses `facilitator <url> [header <name> <value>]...`
// with an optional block of header and timeout lines.
func (h *Handler) unmarshalFacilitator(d *caddyfile.Dispenser) error {
	var u string
	if !d.NextArg() {
		return d.ArgErr()
	}
	u = d.Val()
	fc := &FacilitatorConfig{URL: u}
	addHeader := func() error {
		var name, value string
		if !d.NextArg() {
			return d.ArgErr()
		}
		name = d.Val()
		if !d.NextArg() {
			return d.ArgErr()
		}
		value = d.Val()
		if fc.Headers == nil {
			fc.Headers = http.Header{}
		}
		fc.Headers.Add(name, value)
		return nil
	}
	for d.NextArg() {
		if d.Val() != "header" {
			return d.Errf("facilitator: expected 'header <name> <value>', got '%s'", d.Val())
		}
		if err := addHeader(); err != nil {
			return err
		}
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		switch d.Val() {
		case "header":
			if err := addHeader(); err != nil {
				return err
			}
			if d.NextArg() {
				return d.ArgErr()
			}
		case "timeout", "settle_timeout":
			opt := d.Val()
			var v string
			if !d.AllArgs(&v) {
				return d.ArgErr()
			}
			dur, err := caddy.ParseDuration(v)
			if err != nil || dur <= 0 {
				return d.Errf("facilitator %s '%s' must be a positive duration", opt, v)
			}
			if opt == "timeout" {
				fc.Timeout = caddy.Duration(dur)
			} else {
				fc.SettleTimeout = caddy.Duration(dur)
			}
		default:
			return d.Errf("unrecognized facilitator option '%s'", d.Val())
		}
	}
	if u == "" {
		if fc.Headers != nil || fc.Timeout != 0 || fc.SettleTimeout != 0 {
			return d.Err("facilitator: options given without a URL")
		}
		h.Facilitator = nil
		return nil
	}
	h.Facilitator = fc
	return nil
}

// subdirectives are the options UnmarshalCaddyfile takes, which an unknown
// one is compared with (a test holds the two together).
var subdirectives = []string{"pay_to", "network", "facilitator", "fee_payer", "rpc", "price", "free",
	"precheck_daily_limit", "precheck_address_daily_limit", "precheck_interval", "precheck_sign_in",
	"store", "rulebook", "cors_origins", "playground"}

// Interface guard
var _ caddyfile.Unmarshaler = (*Handler)(nil)
