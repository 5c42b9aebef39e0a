package chatbody

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
)

// Corpora is the folder of the published corpora: PROMPTWALL_CORPORA when
// it is set, else the repository's bench/corpora, which ReadCorpus reads
// gzipped as committed or unpacked by bench/corpora.sh.
func Corpora() string {
	if dir := os.Getenv("PROMPTWALL_CORPORA"); dir != "" {
		return dir
	}
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return filepath.Join("bench", "corpora")
	}
	return filepath.Join(filepath.Dir(file), "..", "corpora")
}

// OpenCorpus opens the corpus file path, or path.gz through gzip when path
// is missing.
func OpenCorpus(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err == nil || !os.IsNotExist(err) {
		return f, err
	}
	gz, gerr := os.Open(path + ".gz")
	if gerr != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(gz)
	if err != nil {
		gz.Close()
		return nil, fmt.Errorf("%s.gz: %w", path, err)
	}
	return gzipFile{zr, gz}, nil
}

type gzipFile struct {
	*gzip.Reader
	f *os.File
}

func (g gzipFile) Close() error {
	g.Reader.Close()
	return g.f.Close()
}
