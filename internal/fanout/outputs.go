package fanout

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/msbench/msbench/internal/results"
)

// WriteOutputs writes the generator output in dir (what Generate wrote)
// to w as a tar stream of its files, for a generator whose output
// travels back over a pipe (a pod's exec) rather than a shared disk.
func WriteOutputs(w io.Writer, dir results.StepDir) error {
	entries, err := os.ReadDir(string(dir))
	if err != nil {
		return fmt.Errorf("generator output: %w", err)
	}
	tw := tar.NewWriter(w)
	for _, e := range entries {
		// A hidden file is a writer's temporary, not output.
		if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if err := addFile(tw, filepath.Join(string(dir), e.Name())); err != nil {
			return fmt.Errorf("generator output: %w", err)
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("generator output: %w", err)
	}
	return nil
}

func addFile(tw *tar.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: filepath.Base(path), Size: st.Size(), Mode: 0o644, ModTime: st.ModTime()}); err != nil {
		return err
	}
	// A file that changed size since Stat fails the copy rather than
	// leaving a short entry.
	n, err := io.Copy(tw, f)
	if err == nil && n != st.Size() {
		err = fmt.Errorf("%s changed while being sent", path)
	}
	return err
}

// ReadOutputs unpacks a tar stream that WriteOutputs wrote into dir,
// which it creates. It takes plain files alone, by their base names: the
// stream comes from a pod, and a name with a directory in it or a link
// must not write outside dir.
func ReadOutputs(r io.Reader, dir results.StepDir) error {
	if err := os.MkdirAll(string(dir), 0o755); err != nil {
		return fmt.Errorf("generator output: %w", err)
	}
	tr := tar.NewReader(r)
	files := 0
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("generator output: %w", err)
		}
		if h.Typeflag != tar.TypeReg || h.Name != filepath.Base(h.Name) || strings.HasPrefix(h.Name, ".") {
			return fmt.Errorf("generator output: entry %q is not a plain file of the output", h.Name)
		}
		if err := writeFile(filepath.Join(string(dir), h.Name), tr); err != nil {
			return fmt.Errorf("generator output: %w", err)
		}
		files++
	}
	if files == 0 {
		return errors.New("generator output: the stream holds no file")
	}
	return nil
}

func writeFile(path string, r io.Reader) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, r)
	return errors.Join(err, f.Close())
}
