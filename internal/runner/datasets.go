package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/msbench/msbench/internal/placeholder"
	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/study"
)

// resolveDatasets gives each dataset its file: the shared data directory's
// when it is there, else the stand-in a build made. It runs after the
// builds, whose outputs the stand-ins are, and records the choice with the
// file's digest, so that a report can say which data it measured.
func resolveDatasets(s *study.Study, dataDir string, values map[string]string) (map[string]results.DatasetFile, error) {
	used := map[string]results.DatasetFile{}
	for _, ds := range s.Datasets {
		f := results.DatasetFile{Path: filepath.Join(dataDir, ds.File), Source: results.DatasetShared}
		// Only an absent file gives way to the stand-in: one that is there
		// but unreadable is the shared data's problem, said as such.
		_, statErr := os.Stat(f.Path)
		switch {
		case errors.Is(statErr, fs.ErrNotExist):
			stand, err := placeholder.Expand(ds.Otherwise, values)
			if err != nil {
				return nil, fmt.Errorf("dataset %s: %w", ds.Name, err)
			}
			f = results.DatasetFile{Path: stand, Source: results.DatasetGenerated}
		case statErr != nil:
			return nil, fmt.Errorf("dataset %s: %w", ds.Name, statErr)
		}
		sum, size, err := digest(f.Path)
		if err != nil {
			if f.Source == results.DatasetShared {
				return nil, fmt.Errorf("dataset %s: %w", ds.Name, err)
			}
			return nil, fmt.Errorf("dataset %s: %s is absent, and its stand-in: %w", ds.Name, filepath.Join(dataDir, ds.File), err)
		}
		f.SHA256, f.Bytes = sum, size
		used[ds.Name] = f
		values["dataset."+ds.Name] = f.Path
	}
	return used, nil
}

// maxDatasetBytes bounds a dataset's file, which is read whole to digest it.
const maxDatasetBytes = 1 << 30

// digest reads a dataset's file: a regular file (a symlink's target is
// what counts) of at most maxDatasetBytes. It opens without blocking and
// checks what it opened, so that a FIFO, or a device such as /dev/zero,
// is refused rather than read forever.
func digest(path string) (string, int64, error) {
	file, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", 0, err
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil {
		return "", 0, err
	}
	if !info.Mode().IsRegular() {
		return "", 0, fmt.Errorf("%s is not a regular file", path)
	}
	tooBig := fmt.Errorf("%s is over %d MiB, the most a dataset may be", path, maxDatasetBytes>>20)
	if info.Size() > maxDatasetBytes {
		return "", 0, tooBig
	}
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(file, maxDatasetBytes+1))
	if err != nil {
		return "", 0, err
	}
	if n > maxDatasetBytes { // it grew while read
		return "", 0, tooBig
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}
