// Package x402 implements the seller side of the x402 payment protocol,
// version 2, scheme "exact", on Solana (mainnet and devnet) in USDC.
//
// It builds the PAYMENT-REQUIRED answer, decodes the PAYMENT-SIGNATURE header,
// checks on the client's transaction everything a server can check without a
// network (wire format, v0 message, ed25519 signatures, instruction layout,
// mint, destination, exact amount, fee payer isolation), talks to a
// facilitator (/supported, /verify, /settle) and encodes PAYMENT-RESPONSE.
// It also builds the extensions a seller advertises (payment-identifier,
// bazaar) and reads a client's payment identifier.
//
// The wire formats follow the x402 specification (specs/transports-v2/http.md,
// specs/schemes/exact/scheme_exact_svm.md, specs/extensions/) and the reference npm packages
// @x402/core and @x402/svm 2.27.0, whose reason strings this package reuses.
package x402
