// Package proccpu reads how much CPU a process has used, from /proc: the
// load programs of bench/ report a server's CPU per request with it.
package proccpu

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// Of returns the user+system CPU time of process pid, or -1.
func Of(pid int) time.Duration {
	if pid <= 0 {
		return -1
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	// The fields after the parenthesised command name; utime and stime
	// are fields 14 and 15 of the line, in clock ticks (100 a second on
	// Linux).
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return -1
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	k, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	return time.Duration(u+k) * 10 * time.Millisecond
}
