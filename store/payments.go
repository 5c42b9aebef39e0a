package store

import (
	"errors"
	"time"
)

// PaymentState is where a payment stands on its way from a signed
// transaction to a delivered scan.
//
//	settling ──► settled ──► delivered
//	    │
//	    ├──► failed     (settlement refused after it may have been sent)
//	    └──► (released) (definitely never sent: the key is free again)
type PaymentState string

// The payment states.
const (
	// PaymentSettling: reserved, and settlement asked for or about to be.
	// Whether it landed is not known until the facilitator answers or,
	// after a crash, until it is reconciled.
	PaymentSettling PaymentState = "settling"
	// PaymentSettled: landed, and its ledger row is written (both in one
	// step). The scan it paid for may not have reached the client yet: a
	// retry with the same payment is given it.
	PaymentSettled PaymentState = "settled"
	// PaymentDelivered: the scan was answered.
	PaymentDelivered PaymentState = "delivered"
	// PaymentFailed: the facilitator refused the settlement after the
	// transaction may have been sent. The key stays used, no row is
	// written, and nothing is delivered.
	PaymentFailed PaymentState = "failed"
)

// Payment is what the store keeps of one payment. None of it comes from the
// submitted text except the ledger fields of Row (verdict and category
// counts), which the ledger keeps anyway.
type Payment struct {
	// Key identifies the payment: the SHA-256 of the transaction message,
	// so a transaction is used once whatever else the header carries.
	Key string
	// Ident is the client's payment-identifier (x402 extension), or empty.
	// It is unique: one identifier names one payment.
	Ident string
	// State is where the payment stands.
	State PaymentState
	// Header is the PAYMENT-SIGNATURE header as received: the payer's
	// signed transaction, which settles or finds the payment again after
	// a crash. Kept while settling only.
	Header string
	// Accepted is the JSON of the payment requirements it was checked
	// against. Kept while settling only.
	Accepted string
	// Row is the ledger row its settlement writes; Row.Time is set then.
	// Once delivered or failed only Row.Payer is kept (the ledger has the
	// rest).
	Row LedgerRow
	// Transaction is the on-chain signature, once settled.
	Transaction string
	// Since is when the payment entered State.
	Since time.Time
	// Owner is the server handling the payment while it is in flight
	// (see Store.Heartbeat); OwnerSeen is its last heartbeat, zero when
	// it never beat or left.
	Owner     string
	OwnerSeen time.Time
}

// ErrIdentInUse is returned by Reserve when the payment-identifier already
// names another payment.
var ErrIdentInUse = errors.New("store: the payment identifier names another payment")
