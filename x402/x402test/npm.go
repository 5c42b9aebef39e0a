// Package x402test runs the Node harness of integration/x402node from Go
// tests: a local Solana chain (LiteSVM) with a real x402 facilitator, and the
// real x402 client paying a URL. It needs Node 20+ and npm; a missing tool is
// a test failure, not a skip.
package x402test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// NodeDir finds integration/x402node by walking up from the working
// directory (a package directory under go test) to the module root.
func NodeDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the module root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			d := filepath.Join(dir, "integration", "x402node")
			if _, err := os.Stat(filepath.Join(d, "package-lock.json")); err != nil {
				return "", fmt.Errorf("finding the Node harness: %w", err)
			}
			return d, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("finding the module root: no go.mod above the working directory")
		}
		dir = parent
	}
}

// EnsureNodeModules runs `npm ci --no-audit --no-fund` in dir when
// node_modules is missing or older than package-lock.json. Test binaries of
// several packages may run at once, so a lock directory serializes them.
func EnsureNodeModules(ctx context.Context, dir string) error {
	if fresh(dir) {
		return nil
	}
	unlock, err := lock(ctx, dir)
	if err != nil {
		return err
	}
	defer unlock()
	if fresh(dir) { // another process installed while we waited
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("npm ci in %s: %w\n%s", dir, err, out)
	}
	return nil
}

// fresh reports whether npm's own record of the install
// (node_modules/.package-lock.json) is at least as new as the lockfile.
func fresh(dir string) bool {
	lockInfo, err := os.Stat(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return false
	}
	inst, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json"))
	if err != nil {
		return false
	}
	return !inst.ModTime().Before(lockInfo.ModTime())
}

// lock takes a lock directory in the system temp dir named after dir; one
// left by a killed process is taken over after 15 minutes.
func lock(ctx context.Context, dir string) (func(), error) {
	sum := sha256.Sum256([]byte(dir))
	path := filepath.Join(os.TempDir(), "x402node-npm-"+hex.EncodeToString(sum[:8])+".lock")
	for {
		err := os.Mkdir(path, 0o700)
		if err == nil {
			return func() { os.Remove(path) }, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("locking npm install: %w", err)
		}
		if st, err := os.Stat(path); err == nil && time.Since(st.ModTime()) > 15*time.Minute {
			os.Remove(path)
			continue
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for another npm install: %w", ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
