package loadspec

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// FormField is one part of a multipart/form-data body.
type FormField struct {
	Name string
	File string // path; when empty, Value is sent as a plain field
	// Value is a plain field's text.
	Value string
}

// MaxBodySize bounds a request body, whether read from one file or
// assembled from a form's: every request holds it in memory, once per user
// or connection, so a larger one is a mistake (or /dev/zero), refused before
// anything is sent.
const MaxBodySize = 64 << 20

// ReadBodyFile reads a request body from a regular file of at most
// MaxBodySize bytes.
func ReadBodyFile(path string) ([]byte, error) {
	return readBounded(path, MaxBodySize)
}

// readBounded reads a regular file of at most limit bytes. A FIFO, a device
// or a symlink to one is refused rather than read: /dev/zero never ends and
// a FIFO without a writer blocks, so the file is opened without blocking
// and its kind read from the open descriptor, where no rename can swap it.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s, not a regular file", path, kind(info.Mode()))
	}
	tooLarge := fmt.Errorf("%s: larger than the %d MiB a request body may hold", path, MaxBodySize>>20)
	if info.Size() > limit {
		return nil, tooLarge
	}
	// The file may grow while it is read: the read is bounded too.
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, tooLarge
	}
	return data, nil
}

// kind names what a file that is not a regular one is.
func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	}
	return "special"
}

// MultipartBody encodes fields as multipart/form-data once, before the load,
// so that every request reuses the same bytes. It returns the body and its
// Content-Type. The body, files and all, holds at most MaxBodySize bytes.
func MultipartBody(fields []FormField) ([]byte, string, error) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, f := range fields {
		if f.File == "" {
			if err := mw.WriteField(f.Name, f.Value); err != nil {
				return nil, "", fmt.Errorf("form field %s: %w", f.Name, err)
			}
			continue
		}
		data, err := readBounded(f.File, MaxBodySize-int64(buf.Len()))
		if err != nil {
			return nil, "", fmt.Errorf("form field %s: %w", f.Name, err)
		}
		part, err := mw.CreatePart(fileHeader(f.Name, filepath.Base(f.File), data))
		if err != nil {
			return nil, "", fmt.Errorf("form field %s: %w", f.Name, err)
		}
		if _, err := part.Write(data); err != nil {
			return nil, "", fmt.Errorf("form field %s: %w", f.Name, err)
		}
	}
	if err := mw.Close(); err != nil {
		return nil, "", fmt.Errorf("multipart body: %w", err)
	}
	if buf.Len() > MaxBodySize {
		return nil, "", fmt.Errorf("multipart body of %d bytes: over the %d MiB a request body may hold", buf.Len(), MaxBodySize>>20)
	}
	return buf.Bytes(), mw.FormDataContentType(), nil
}

// ParseFormField reads the curl-style `name=@path` or `name=value`.
func ParseFormField(s string) (FormField, error) {
	name, value, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return FormField{}, fmt.Errorf("form field %q: want name=@file or name=value", s)
	}
	if file, isFile := strings.CutPrefix(value, "@"); isFile {
		if file == "" {
			return FormField{}, fmt.Errorf("form field %q: no file after @", s)
		}
		return FormField{Name: name, File: file}, nil
	}
	return FormField{Name: name, Value: value}, nil
}

func fileHeader(field, filename string, data []byte) map[string][]string {
	quote := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace
	return map[string][]string{
		"Content-Disposition": {fmt.Sprintf(`form-data; name="%s"; filename="%s"`, quote(field), quote(filename))},
		"Content-Type":        {detectType(filename, data)},
	}
}

// detectType trusts the content over the name, as a server would.
func detectType(filename string, data []byte) string {
	if t := http.DetectContentType(data); t != "application/octet-stream" {
		return t
	}
	switch strings.ToLower(filepath.Ext(filename)) {
	case ".json":
		return "application/json"
	case ".txt":
		return "text/plain"
	}
	return "application/octet-stream"
}
