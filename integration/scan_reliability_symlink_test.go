package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/promptwall/promptwall/x402"
)

// one process, two sites whose store paths name one SQLite file
// (one through a symlinked directory): the pool keys stores by
// filepath.Abs, so the two sites get two pooled stores with their own
// in-memory delivery marks, and one payment is scanned on both.
func TestScanReliabilityOneFileTwoSpellings(t *testing.T) {
	fac := startCountingFacilitator(t)
	dir := t.TempDir()
	link := dir + "-link"
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(link) })
	a := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	b := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	m := newGoPayer("spellings merchant").addr
	site := "http://%s {\n\tprompt_scan {\n\t\tpay_to %s\n\t\tfacilitator %s\n\t\tstore sqlite \"%s\"\n\t}\n}\n"
	cfg := "{\n\tadmin off\n}\n" + fmt.Sprintf(site, a, m, fac.URL, filepath.Join(dir, "scan.db")) +
		fmt.Sprintf(site, b, m, fac.URL, filepath.Join(link, "scan.db"))
	startCaddy(t, cfg, nil, a, b)
	offer := fetchOffer(t, "http://"+a+"/scan")
	h := newGoPayer("spellings payer").header(t, offer, "x")
	if st, _, _, _ := rawPost("http://"+a+"/scan", scanText, map[string]string{"PAYMENT-SIGNATURE": h}); st != 200 {
		t.Fatalf("first use: %d", st)
	}
	st, hdr, _, _ := rawPost("http://"+b+"/scan", scanText, map[string]string{"PAYMENT-SIGNATURE": h})
	if st != 402 || offerError(hdr) != x402.ReasonDuplicateSettlement {
		t.Fatalf("the same payment on the other site: %d, want 402 duplicate_settlement", st)
	}
}
