package integration

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"
)

// A client waiting for 100 Continue with a body over the cap gets its 413
// at once, and its body is never asked for. (A client that sends the head
// of a huge body and then waits is not served early: the server drains a
// little of a body being sent, so that its sender reads the 413 rather
// than a reset.)
func TestScanReliabilityOverCapDeclaredBodyAnsweredAtOnce(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startCaddy(t, fmt.Sprintf("{\n\tadmin off\n}\n\nhttp://%s {\n\tprompt_scan {\n\t\tfree\n\t\tstore sqlite \"%s\"\n\t}\n}\n",
		addr, filepath.Join(t.TempDir(), "scan.db")), nil, addr)
	for _, head := range []string{
		"POST /scan HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: 1000000000\r\n\r\n",
		"POST /precheck HTTP/1.1\r\nHost: %s\r\nExpect: 100-continue\r\nContent-Length: 70000\r\n\r\n",
	} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(3 * time.Second))
		fmt.Fprintf(conn, head, addr)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		conn.Close()
		if err != nil || resp.StatusCode != 413 {
			t.Errorf("%q: %v %v, want 413 at once", head, resp, err)
		}
	}
}
