// Package pgtest runs a private PostgreSQL server for tests: initdb and
// pg_ctl from the machine's PostgreSQL packages, in a temporary directory,
// on a free loopback port, trusting local connections. Each test gets a
// database of its own.
//
// Without the packages a test is skipped with a message saying so, except
// when CI=true: there the packages are installed by .ci/run, and a missing
// server fails the test.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Server is a running private PostgreSQL.
type Server struct {
	dir  string // holds data/ and the socket
	port int
	bin  string
	as   []string // command prefix running PostgreSQL's programs as a non-root user
	n    atomic.Int64
}

// ErrNoPostgres is returned by Start when no PostgreSQL packages are found.
var ErrNoPostgres = errors.New("pgtest: no PostgreSQL server programs (initdb, pg_ctl) found; install Debian's postgresql package")

// bindir finds the newest /usr/lib/postgresql/<version>/bin with initdb,
// or a PATH that has it.
func bindir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(dirs[i]))))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(dirs[j]))))
		return vi > vj
	})
	if len(dirs) > 0 {
		return filepath.Dir(dirs[0]), nil
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", ErrNoPostgres
}

// Start initializes and starts a server. Stop it with Stop.
func Start() (*Server, error) {
	bin, err := bindir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, bin: bin}
	// PostgreSQL refuses to run as root: run its programs as the
	// package's postgres user, which then owns the directory.
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("pgtest: running as root needs the postgres user of the package: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chmod(dir, 0o755); err != nil {
			return nil, err
		}
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
		s.as = []string{"runuser", "-u", "postgres", "--"}
	}
	if s.port, err = freePort(); err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	if out, err := s.run("initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: initdb: %v\n%s", err, out)
	}
	if err := s.Up(); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "log"))
		os.RemoveAll(dir)
		return nil, fmt.Errorf("%v\n%s", err, log)
	}
	return s, nil
}

func (s *Server) run(prog string, args ...string) ([]byte, error) {
	argv := append(append(append([]string{}, s.as...), filepath.Join(s.bin, prog)), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = s.dir
	return cmd.CombinedOutput()
}

// Stop stops the server (immediate mode) and removes its directory.
func (s *Server) Stop() {
	s.run("pg_ctl", "-D", filepath.Join(s.dir, "data"), "-m", "immediate", "-w", "stop")
	os.RemoveAll(s.dir)
}

// Restart stops the server abruptly and starts it again on the same port
// and data, as a database crash and recovery would.
func (s *Server) Restart() error {
	if err := s.Down(); err != nil {
		return err
	}
	return s.Up()
}

// Down stops the server abruptly (immediate mode), as a crash would, and
// keeps its data and port: clients find nothing listening until Up.
func (s *Server) Down() error {
	if out, err := s.run("pg_ctl", "-D", filepath.Join(s.dir, "data"), "-m", "immediate", "-w", "stop"); err != nil {
		return fmt.Errorf("pgtest: stop: %v\n%s", err, out)
	}
	return nil
}

// Up starts a server stopped with Down again, on the same port and data,
// and returns once it accepts connections.
func (s *Server) Up() error {
	opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s -c fsync=off -c max_connections=200", s.port, s.dir)
	if out, err := s.run("pg_ctl", "-D", filepath.Join(s.dir, "data"), "-o", opts, "-l", filepath.Join(s.dir, "log"), "-w", "-t", "60", "start"); err != nil {
		return fmt.Errorf("pgtest: start: %v\n%s", err, out)
	}
	return nil
}

// DSN is the connection string of database name.
func (s *Server) DSN(name string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, name)
}

// Database creates a new empty database and returns its DSN.
func (s *Server) Database(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("t%d_%d", os.Getpid(), s.n.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, s.DSN("postgres"))
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return s.DSN(name)
}

var (
	shared     *Server
	sharedErr  error
	sharedOnce sync.Once
)

// Shared is one server for the whole test binary, started on first use;
// the binary's TestMain stops it with StopShared. A test calls it to get
// its database: without PostgreSQL it is skipped, or fails under CI=true.
func Shared(t testing.TB) *Server {
	t.Helper()
	sharedOnce.Do(func() { shared, sharedErr = Start() })
	if sharedErr != nil {
		if errors.Is(sharedErr, ErrNoPostgres) && os.Getenv("CI") != "true" {
			t.Skipf("skipped: %v (CI=true never skips)", sharedErr)
		}
		t.Fatal(sharedErr)
	}
	return shared
}

// StopShared stops the shared server if one was started.
func StopShared() {
	if shared != nil {
		shared.Stop()
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
