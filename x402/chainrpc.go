package x402

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"
)

// DefaultChainTimeout bounds one JSON-RPC call of a ChainClient.
const DefaultChainTimeout = 10 * time.Second

// maxRPCBody bounds what is read from a Solana node. A page of 1,000
// signatures with memos, or one transaction with its logs, fits well within.
const maxRPCBody = 4 << 20

// Solana JSON-RPC error codes the lookup tells apart.
const (
	// rpcUnsupportedVersion: the transaction's version is above
	// maxSupportedTransactionVersion. It is not the payment (a v0 message).
	rpcUnsupportedVersion = -32015
)

// RPCError is a JSON-RPC error answer from the Solana node: a definite
// refusal of the call, not a verdict on the payment.
type RPCError struct {
	Method  string
	Code    int
	Message string
}

func (e *RPCError) Error() string {
	return fmt.Sprintf("solana RPC %s: error %d: %s", e.Method, e.Code, e.Message)
}

// rpcEnvelope is a JSON-RPC 2.0 answer. Result stays raw: absent and null
// differ (getTransaction answers null for "not found").
type rpcEnvelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

var rpcIDs atomic.Uint64

// call performs one JSON-RPC request and returns its raw result.
func (c *ChainClient) call(ctx context.Context, method string, params ...any) (json.RawMessage, error) {
	if c.URL == "" {
		return nil, errors.New("solana RPC: no URL configured")
	}
	id := rpcIDs.Add(1)
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return nil, fmt.Errorf("solana RPC %s: encoding request: %w", method, err)
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultChainTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("solana RPC %s: %w", method, err)
	}
	for k, vs := range c.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	client := c.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("solana RPC %s: %w", method, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxRPCBody+1))
	if err != nil {
		return nil, fmt.Errorf("solana RPC %s: reading answer: %w", method, err)
	}
	if len(data) > maxRPCBody {
		return nil, fmt.Errorf("solana RPC %s: answer larger than %d bytes", method, maxRPCBody)
	}
	res, err := parseEnvelope(data, id)
	var rerr *RPCError
	if errors.As(err, &rerr) {
		rerr.Method = method
		return nil, rerr
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("solana RPC %s: HTTP %d: %s", method, resp.StatusCode, snippet(data))
	}
	if err != nil {
		return nil, fmt.Errorf("solana RPC %s: %w", method, err)
	}
	return res, nil
}

// parseEnvelope checks a JSON-RPC answer to request id and returns its
// result, or an *RPCError.
func parseEnvelope(data []byte, id uint64) (json.RawMessage, error) {
	var env rpcEnvelope
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, fmt.Errorf("undecodable answer: %v: %s", err, snippet(data))
	}
	if env.JSONRPC != "2.0" || string(bytes.TrimSpace(env.ID)) != fmt.Sprint(id) {
		return nil, fmt.Errorf("answer is not JSON-RPC 2.0 for request %d: %s", id, snippet(data))
	}
	if env.Error != nil {
		return nil, &RPCError{Code: env.Error.Code, Message: env.Error.Message}
	}
	if len(env.Result) == 0 {
		return nil, fmt.Errorf("answer has neither result nor error: %s", snippet(data))
	}
	return env.Result, nil
}

// parseBlockhashValid decodes isBlockhashValid's {"context":{"slot"},"value"}.
func parseBlockhashValid(res json.RawMessage) (valid bool, slot uint64, err error) {
	var v struct {
		Context *struct {
			Slot *uint64 `json:"slot"`
		} `json:"context"`
		Value *bool `json:"value"`
	}
	if err := json.Unmarshal(res, &v); err != nil {
		return false, 0, fmt.Errorf("isBlockhashValid: %v", err)
	}
	if v.Context == nil || v.Context.Slot == nil || v.Value == nil {
		return false, 0, fmt.Errorf("isBlockhashValid: answer lacks context.slot or value: %s", snippet(res))
	}
	return *v.Value, *v.Context.Slot, nil
}

// parseBlockTime decodes getBlockTime's Unix time; null (unknown) is an error.
func parseBlockTime(res json.RawMessage) (int64, error) {
	var t *int64
	if err := json.Unmarshal(res, &t); err != nil {
		return 0, fmt.Errorf("getBlockTime: %v", err)
	}
	if t == nil {
		return 0, errors.New("getBlockTime: the node does not know the block's time")
	}
	return *t, nil
}

// signatureEntry is one entry of getSignaturesForAddress.
type signatureEntry struct {
	Signature string `json:"signature"`
	BlockTime *int64 `json:"blockTime"`
}

// parseSignaturePage decodes a page of getSignaturesForAddress that asked
// for at most limit entries; each signature must be 64 bytes of base58.
func parseSignaturePage(res json.RawMessage, limit int) ([]signatureEntry, error) {
	var page []signatureEntry
	if err := json.Unmarshal(res, &page); err != nil {
		return nil, fmt.Errorf("getSignaturesForAddress: %v", err)
	}
	if page == nil { // null; [] decodes to an empty, non-nil slice
		return nil, fmt.Errorf("getSignaturesForAddress: answer is not a list: %s", snippet(res))
	}
	if len(page) > limit {
		return nil, fmt.Errorf("getSignaturesForAddress: %d entries, asked for at most %d", len(page), limit)
	}
	for i, e := range page {
		if _, err := decodeSignature(e.Signature); err != nil {
			return nil, fmt.Errorf("getSignaturesForAddress: entry %d: %w", i, err)
		}
	}
	return page, nil
}

func decodeSignature(s string) ([64]byte, error) {
	var sig [64]byte
	b, err := Base58Decode(s)
	if err != nil {
		return sig, fmt.Errorf("signature %q: %w", s, err)
	}
	if len(b) != 64 {
		return sig, fmt.Errorf("signature %q decodes to %d bytes, want 64", s, len(b))
	}
	return [64]byte(b), nil
}

// chainTransaction is a transaction getTransaction found.
type chainTransaction struct {
	Slot uint64
	Wire []byte
	// Err is the on-chain error; nil when the transaction succeeded.
	Err json.RawMessage
}

// parseTransactionResult decodes getTransaction with encoding base64. A
// null result (not found) is nil without an error. A missing meta is an
// error: without it nobody can tell success from failure.
func parseTransactionResult(res json.RawMessage) (*chainTransaction, error) {
	if string(bytes.TrimSpace(res)) == "null" {
		return nil, nil
	}
	var v struct {
		Slot        *uint64                    `json:"slot"`
		Transaction []string                   `json:"transaction"`
		Meta        map[string]json.RawMessage `json:"meta"`
	}
	if err := json.Unmarshal(res, &v); err != nil {
		return nil, fmt.Errorf("getTransaction: %v", err)
	}
	if v.Slot == nil || len(v.Transaction) != 2 || v.Transaction[1] != "base64" {
		return nil, fmt.Errorf("getTransaction: answer lacks slot or a base64 transaction: %s", snippet(res))
	}
	errJSON, ok := v.Meta["err"]
	if !ok {
		return nil, fmt.Errorf("getTransaction: answer lacks meta.err: %s", snippet(res))
	}
	if len(v.Transaction[0]) > maxTransactionBase64 {
		return nil, fmt.Errorf("getTransaction: transaction of %d base64 characters is longer than %d",
			len(v.Transaction[0]), maxTransactionBase64)
	}
	wire, err := base64.StdEncoding.DecodeString(v.Transaction[0])
	if err != nil {
		return nil, fmt.Errorf("getTransaction: %v", err)
	}
	t := &chainTransaction{Slot: *v.Slot, Wire: wire}
	if e := bytes.TrimSpace(errJSON); !bytes.Equal(e, []byte("null")) {
		t.Err = json.RawMessage(bytes.Clone(e))
	}
	return t, nil
}
