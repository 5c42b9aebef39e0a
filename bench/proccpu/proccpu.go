// Package proccpu reads how much CPU a process has used, from /proc: the
// load programs of bench/ report a server's CPU per request with it.
package proccpu

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Of returns the user+system CPU time of process pid, or -1.
func Of(pid int) time.Duration {
	st, ok := stat(pid)
	if !ok {
		return -1
	}
	return st.own
}

// Tree returns the user+system CPU time of process pid and of all its
// descendants, those still running and those already waited for, or -1: a
// PostgreSQL server is a postmaster and a backend per connection.
func Tree(pid int) time.Duration {
	root, ok := stat(pid)
	if !ok {
		return -1
	}
	children := map[int][]int{}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		p, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		if st, ok := stat(p); ok {
			children[st.ppid] = append(children[st.ppid], p)
		}
	}
	// A running process's own time, and its waited-for children's (which
	// include theirs): each CPU second counted once.
	total := root.own + root.children
	queue := children[pid]
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if st, ok := stat(p); ok {
			total += st.own + st.children
		}
		queue = append(queue, children[p]...)
	}
	return total
}

type procStat struct {
	ppid          int
	own, children time.Duration
}

// stat reads the fields of /proc/pid/stat that Of and Tree need.
func stat(pid int) (procStat, bool) {
	if pid <= 0 {
		return procStat{}, false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	// The fields after the parenthesised command name: ppid is field 4 of
	// the line, utime, stime, cutime and cstime fields 14 to 17, in clock
	// ticks (100 a second on Linux).
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 15 {
		return procStat{}, false
	}
	var v [5]int64
	for i, j := range []int{1, 11, 12, 13, 14} {
		n, err := strconv.ParseInt(f[j], 10, 64)
		if err != nil {
			return procStat{}, false
		}
		v[i] = n
	}
	tick := 10 * time.Millisecond
	return procStat{ppid: int(v[0]), own: time.Duration(v[1]+v[2]) * tick, children: time.Duration(v[3]+v[4]) * tick}, true
}
