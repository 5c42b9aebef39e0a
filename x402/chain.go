package x402

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// A server that loses the answer of /settle (killed while the facilitator
// ran) holds the payment but not the transaction's id: signature 0 is the
// fee payer's, made by the facilitator. Asking the facilitator again cannot
// tell (the reference answers duplicate_settlement, then a simulation
// failure). The chain can: ChainClient.FindPayment looks for the payment's
// message in the history of an account it writes, and decides from the
// blockhash whether a payment not found can still land.
//
// Everything is read at commitment "finalized". A transaction seen only at
// "confirmed" sits in a block that may still be dropped; a ledger row written
// for it could stand for money that never moved, so such a payment is
// PaymentPending until it is finalized (about 13 seconds later) or gone.
//
// "Can never land" rests on three facts. The blockhash is checked first, at
// a finalized slot S; the search then runs at commitment finalized with
// minContextSlot S, so it covers every block up to S even on a load-balanced
// RPC whose nodes lag one another. A blockhash expired at S is expired in
// every block after S, so the payment can only be in blocks up to S, which
// the search covered. And "not valid at S" also holds for a blockhash newer
// than S (S does not know it yet), which may well land: so the verdict also
// needs S's block time to be later than the moment the payment was received
// (plus ClockSlack), when its blockhash already existed. All of it assumes a
// recent blockhash, not a durable nonce, which CheckExactSVM ensures (a
// nonce advance would have to be the first instruction).

// PaymentState is what the chain says about a payment.
type PaymentState int

const (
	// PaymentPending: not found in a finalized block, and it may still land
	// (or is landing). Ask again later. It is the zero value, so that an
	// unset Fate never reads as a decision.
	PaymentPending PaymentState = iota
	// PaymentLanded: in a finalized block; Fate.Succeeded says whether the
	// transfer happened.
	PaymentLanded
	// PaymentNeverLanded: in no finalized block, and its blockhash expired
	// in a finalized block produced after the payment was received: no
	// transaction of this message can ever land.
	PaymentNeverLanded
)

func (s PaymentState) String() string {
	switch s {
	case PaymentPending:
		return "pending"
	case PaymentLanded:
		return "landed"
	case PaymentNeverLanded:
		return "never landed"
	}
	return fmt.Sprintf("PaymentState(%d)", int(s))
}

// Fate is the answer of FindPayment.
type Fate struct {
	State PaymentState
	// Signature is the landed transaction's id (signature 0, the fee
	// payer's) in base58, as /settle returns it.
	Signature string
	Slot      uint64
	// Succeeded is true when the landed transaction ran without error: the
	// tokens moved. A landed failure charged the fee payer and moved no
	// tokens, and its message can never land again.
	Succeeded bool
	// Err is the on-chain error of a landed failure, as the RPC renders it.
	Err json.RawMessage
}

// ErrSearchLimit means the account's history since the payment was received
// is longer than the search may read (ChainClient.MaxPages): the answer is
// unknown, not negative.
var ErrSearchLimit = errors.New("payment search: account history longer than the search limit")

// Defaults of ChainClient.
const (
	DefaultSignaturePageSize = 100
	DefaultMaxSignaturePages = 10
	DefaultClockSlack        = 2 * time.Minute
)

// ChainClient is a Solana JSON-RPC client that can tell what became of a
// payment. It needs a node that serves the history of the window searched
// (any provider backed by long-term storage does). It is safe for
// concurrent use.
type ChainClient struct {
	URL    string      // the JSON-RPC endpoint
	Header http.Header // sent with every request, e.g. an API key
	Client *http.Client
	// Timeout bounds each call (DefaultChainTimeout when zero).
	Timeout time.Duration
	// PageSize is the limit of each getSignaturesForAddress page, 1 to
	// 1000 (DefaultSignaturePageSize when zero).
	PageSize int
	// MaxPages bounds the pages read (DefaultMaxSignaturePages when zero).
	MaxPages int
	// ClockSlack is how far block times and this machine's clock may
	// disagree (DefaultClockSlack when zero). The search reaches back to
	// received minus the slack; a never-landed verdict waits for a finalized
	// block later than received plus the slack.
	ClockSlack time.Duration
}

// FindPayment looks for the transaction of a payment on chain. tx is the
// payment as the client sent it (the fee payer's signature may be empty);
// it matches on the message bytes, which the signatures sign and which one
// landed transaction at most can carry. account is an account the
// transaction references whose history is searched: the transfer's source
// token account is the natural choice (quiet, and specific to the payer).
// received is when the server received the payment, before it asked for
// settlement: the transaction cannot have landed earlier.
//
// An error means nothing was decided (the node failed, lagged, answered
// nonsense, or the history was too long: ErrSearchLimit); ask again later.
func (c *ChainClient) FindPayment(ctx context.Context, tx *Transaction, account PublicKey, received time.Time) (Fate, error) {
	if tx == nil || len(tx.MessageBytes) == 0 {
		return Fate{}, errors.New("finding payment: no transaction")
	}
	if received.IsZero() {
		return Fate{}, errors.New("finding payment: no time of receipt")
	}
	if !references(&tx.Message, account) {
		return Fate{}, fmt.Errorf("finding payment: the transaction does not reference %s", account)
	}
	size, pages, slack := c.limits()

	res, err := c.call(ctx, "isBlockhashValid", Base58Encode(tx.Message.RecentBlockhash[:]),
		map[string]any{"commitment": "finalized"})
	if err != nil {
		return Fate{}, err
	}
	valid, slot, err := parseBlockhashValid(res)
	if err != nil {
		return Fate{}, err
	}

	floor := received.Add(-slack).Unix()
	seen := make(map[string]bool)
	before := ""
	for page := 0; ; page++ {
		if page == pages {
			return Fate{}, fmt.Errorf("%w: %d pages of %d signatures of %s", ErrSearchLimit, pages, size, account)
		}
		cfg := map[string]any{"commitment": "finalized", "limit": size, "minContextSlot": slot}
		if before != "" {
			cfg["before"] = before
		}
		res, err := c.call(ctx, "getSignaturesForAddress", account.String(), cfg)
		if err != nil {
			return Fate{}, err
		}
		entries, err := parseSignaturePage(res, size)
		if err != nil {
			return Fate{}, err
		}
		done := len(entries) < size
		for _, e := range entries {
			// Newest first: an entry older than the floor ends the window.
			if e.BlockTime != nil && *e.BlockTime < floor {
				done = true
				break
			}
			if seen[e.Signature] {
				continue
			}
			seen[e.Signature] = true
			if f, ok, err := c.match(ctx, e.Signature, tx); err != nil || ok {
				return f, err
			}
		}
		if done {
			break
		}
		before = entries[len(entries)-1].Signature
	}

	if valid {
		return Fate{State: PaymentPending}, nil
	}
	res, err = c.call(ctx, "getBlockTime", slot)
	if err != nil {
		return Fate{}, err
	}
	bt, err := parseBlockTime(res)
	if err != nil {
		return Fate{}, err
	}
	if time.Unix(bt, 0).Before(received.Add(slack)) {
		// S may predate the payment's blockhash: not yet a verdict.
		return Fate{State: PaymentPending}, nil
	}
	return Fate{State: PaymentNeverLanded}, nil
}

// match fetches the transaction sig and reports whether it carries tx's
// message.
func (c *ChainClient) match(ctx context.Context, sig string, tx *Transaction) (Fate, bool, error) {
	res, err := c.call(ctx, "getTransaction", sig, map[string]any{
		"encoding": "base64", "commitment": "finalized", "maxSupportedTransactionVersion": 0})
	var rerr *RPCError
	if errors.As(err, &rerr) && rerr.Code == rpcUnsupportedVersion {
		return Fate{}, false, nil // a later version than the payment's v0
	}
	if err != nil {
		return Fate{}, false, err
	}
	ct, err := parseTransactionResult(res)
	if err != nil {
		return Fate{}, false, err
	}
	if ct == nil {
		// Listed at finalized by the same node, yet unknown: inconsistent.
		return Fate{}, false, fmt.Errorf("solana RPC getTransaction: %s is listed but not found", sig)
	}
	if !bytes.HasSuffix(ct.Wire, tx.MessageBytes) {
		return Fate{}, false, nil
	}
	found, err := ParseTransaction(ct.Wire)
	if err != nil {
		return Fate{}, false, fmt.Errorf("solana RPC getTransaction %s: %w", sig, err)
	}
	if !bytes.Equal(found.MessageBytes, tx.MessageBytes) {
		return Fate{}, false, nil
	}
	if id := Base58Encode(found.Signatures[0][:]); id != sig {
		return Fate{}, false, fmt.Errorf("solana RPC getTransaction %s: answered transaction %s", sig, id)
	}
	return Fate{State: PaymentLanded, Signature: sig, Slot: ct.Slot, Succeeded: ct.Err == nil, Err: ct.Err}, true, nil
}

// PaymentTransaction decodes a payment's transaction and returns it with
// the source token account of its transfer (TransferChecked, instruction 3),
// the account to search with FindPayment.
func PaymentTransaction(p *PaymentPayload) (*Transaction, PublicKey, error) {
	if p == nil {
		return nil, PublicKey{}, errors.New("decoding payment transaction: no payload")
	}
	tx, err := decodeTransaction(p.Payload.Transaction)
	if err != nil {
		return nil, PublicKey{}, fmt.Errorf("decoding payment transaction: %w", err)
	}
	m := &tx.Message
	if len(m.Instructions) < 3 || len(m.Instructions[2].Accounts) != 4 {
		return nil, PublicKey{}, errors.New("decoding payment transaction: instruction 3 is not a transfer")
	}
	ix := m.Instructions[2]
	if p := program(m, ix); p != TokenProgram && p != Token2022Program {
		return nil, PublicKey{}, fmt.Errorf("decoding payment transaction: instruction 3 runs %s, not a token program", p)
	}
	// ParseTransaction checked that the index is in range; a payment loads
	// no account from a lookup table, so it must be a static key.
	if int(ix.Accounts[0]) >= len(m.AccountKeys) {
		return nil, PublicKey{}, errors.New("decoding payment transaction: the transfer's source is not a static key")
	}
	return tx, m.AccountKeys[ix.Accounts[0]], nil
}

func (c *ChainClient) limits() (size, pages int, slack time.Duration) {
	size, pages, slack = c.PageSize, c.MaxPages, c.ClockSlack
	if size <= 0 || size > 1000 {
		size = DefaultSignaturePageSize
	}
	if pages <= 0 {
		pages = DefaultMaxSignaturePages
	}
	if slack <= 0 {
		slack = DefaultClockSlack
	}
	return size, pages, slack
}

// references reports whether k is one of m's static account keys (a
// payment loads none from lookup tables): searching any other account's
// history could never find it.
func references(m *Message, k PublicKey) bool {
	for _, a := range m.AccountKeys {
		if a == k {
			return true
		}
	}
	return false
}
