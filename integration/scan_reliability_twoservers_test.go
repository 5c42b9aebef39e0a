package integration

import "testing"

// One payment sent to two servers sharing one SQLite file at once: one scan.
func TestScanReliabilityTwoServersOnePayment(t *testing.T) {
	onePaymentManyConnections(t, sqliteStore, 2)
}

// A payment replayed on the other server right after its 200: 409 while the
// first may still be answering, then 402; never a second scan.
func TestScanReliabilityReplayOnTheOtherServerAtOnce(t *testing.T) {
	replayOnTheOtherServer(t, sqliteStore, 2, 0)
}
