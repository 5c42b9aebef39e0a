package x402

import "fmt"

// Network is a Solana cluster on which a payment is made in USDC.
type Network struct {
	Name     string // "solana" or "solana-devnet": the configuration name (x402 v1 name)
	CAIP2    string // the x402 v2 network id
	USDCMint string // base58 address of USDC on that cluster
}

var (
	Mainnet = Network{
		Name:     "solana",
		CAIP2:    "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
		USDCMint: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
	}
	Devnet = Network{
		Name:     "solana-devnet",
		CAIP2:    "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
		USDCMint: "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU",
	}
)

// USDCDecimals is the number of decimals of USDC on every Solana cluster.
const USDCDecimals = 6

// DefaultMaxTimeoutSeconds is the maxTimeoutSeconds of requirements built by
// Network.Requirements: the time a client has to pay, as in the reference.
const DefaultMaxTimeoutSeconds = 60

// NetworkByName finds a network by its configuration name ("solana",
// "solana-devnet") or by its CAIP-2 id.
func NetworkByName(name string) (Network, error) {
	for _, n := range []Network{Mainnet, Devnet} {
		if name == n.Name || name == n.CAIP2 {
			return n, nil
		}
	}
	return Network{}, fmt.Errorf("unknown network %q: want %q or %q", name, Mainnet.Name, Devnet.Name)
}

// networkByCAIP2 finds a network by its x402 v2 id.
func networkByCAIP2(id string) (Network, bool) {
	for _, n := range []Network{Mainnet, Devnet} {
		if id == n.CAIP2 {
			return n, true
		}
	}
	return Network{}, false
}

// Requirements builds the "exact" requirements for amount atomic USDC units
// (see USDCAmount) paid to payTo, with the facilitator's feePayer in extra.
// Both addresses are checked so that a typo in configuration fails at start
// and not at the first payment.
func (n Network) Requirements(amount, payTo, feePayer string) (Requirements, error) {
	if _, err := parseUnits(amount); err != nil {
		return Requirements{}, fmt.Errorf("building requirements: %w", err)
	}
	if _, err := ParsePublicKey(payTo); err != nil {
		return Requirements{}, fmt.Errorf("building requirements: payTo: %w", err)
	}
	if _, err := ParsePublicKey(feePayer); err != nil {
		return Requirements{}, fmt.Errorf("building requirements: feePayer: %w", err)
	}
	return Requirements{
		Scheme:            SchemeExact,
		Network:           n.CAIP2,
		Amount:            amount,
		Asset:             n.USDCMint,
		PayTo:             payTo,
		MaxTimeoutSeconds: DefaultMaxTimeoutSeconds,
		Extra:             map[string]any{"feePayer": feePayer},
	}, nil
}
