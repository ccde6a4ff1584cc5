package image

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Epoch is every entry's modification time and the image's creation time:
// a fixed instant, so that the same files give the same digest whenever and
// wherever they are packed (ko and reproducible-builds use the same one).
var Epoch = time.Unix(0, 0).UTC()

// Copy puts the host file or directory Src at the absolute path Dest inside
// the image; a directory is copied with everything under it.
type Copy struct {
	Src  string
	Dest string
}

// Layer is one image layer: what it copies, in order (a later Copy's file
// replaces an earlier one at the same path).
type Layer struct {
	Copies []Copy
	// KeepOwners keeps each file's uid and gid, as a root file system needs
	// (setuid programs, /var/mail); otherwise every entry belongs to root,
	// so that who built the files does not change the digest.
	KeepOwners bool
}

// entry is one tar entry: where it goes in the image and where it is read.
type entry struct {
	name string // relative, slash-separated, no leading slash
	src  string
	info fs.FileInfo
}

// entries lists what l puts in its tar: the parent directories of each
// destination, then each tree, sorted by name so that the walk order of the
// host file system does not show in the digest. Devices, sockets and pipes
// are left out: the runtime provides /dev.
func (l Layer) entries() ([]entry, error) {
	byName := map[string]entry{}
	for _, c := range l.Copies {
		if !path.IsAbs(c.Dest) {
			return nil, fmt.Errorf("layer: destination %q is not absolute", c.Dest)
		}
		dest := strings.TrimPrefix(path.Clean(c.Dest), "/")
		for dir := path.Dir(dest); dir != "." && dir != "/"; dir = path.Dir(dir) {
			if _, ok := byName[dir]; !ok {
				byName[dir] = entry{name: dir}
			}
		}
		err := filepath.Walk(c.Src, func(p string, info fs.FileInfo, err error) error {
			if err != nil {
				return err
			}
			if info.Mode()&(fs.ModeDevice|fs.ModeNamedPipe|fs.ModeSocket) != 0 {
				return nil
			}
			rel, err := filepath.Rel(c.Src, p)
			if err != nil {
				return err
			}
			name := path.Join(dest, filepath.ToSlash(rel))
			if name == "." {
				if !info.IsDir() {
					return fmt.Errorf("a file cannot be the image's root")
				}
				// A directory's root is the image's root, which no tar
				// entry describes.
				return nil
			}
			byName[name] = entry{name: name, src: p, info: info}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("layer: copy %s to %s: %w", c.Src, c.Dest, err)
		}
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	slices.Sort(names)
	out := make([]entry, len(names))
	for i, n := range names {
		out[i] = byName[n]
	}
	return out, nil
}

// writeTar writes l's entries as a tar stream: fixed times, no user or group
// names, hard links kept as links to the first name of their inode.
func (l Layer) writeTar(w io.Writer, entries []entry) error {
	tw := tar.NewWriter(w)
	type inode struct{ dev, ino uint64 }
	seen := map[inode]string{}
	for _, e := range entries {
		if e.info == nil {
			if err := tw.WriteHeader(&tar.Header{
				Typeflag: tar.TypeDir, Name: e.name + "/", Mode: 0o755,
				ModTime: Epoch, Format: tar.FormatPAX,
			}); err != nil {
				return err
			}
			continue
		}
		link := ""
		if e.info.Mode()&fs.ModeSymlink != 0 {
			var err error
			if link, err = os.Readlink(e.src); err != nil {
				return err
			}
		}
		h, err := tar.FileInfoHeader(e.info, link)
		if err != nil {
			return fmt.Errorf("%s: %w", e.src, err)
		}
		h.Name = e.name
		if e.info.IsDir() {
			h.Name += "/"
		}
		h.ModTime, h.AccessTime, h.ChangeTime = Epoch, time.Time{}, time.Time{}
		h.Uname, h.Gname = "", ""
		h.Format = tar.FormatPAX
		st, _ := e.info.Sys().(*syscall.Stat_t)
		if !l.KeepOwners || st == nil {
			h.Uid, h.Gid = 0, 0
		}
		if st != nil && e.info.Mode().IsRegular() && st.Nlink > 1 {
			id := inode{uint64(st.Dev), st.Ino}
			if first, ok := seen[id]; ok {
				h.Typeflag, h.Linkname, h.Size = tar.TypeLink, first, 0
			} else {
				seen[id] = e.name
			}
		}
		if err := tw.WriteHeader(h); err != nil {
			return fmt.Errorf("%s: %w", e.src, err)
		}
		if h.Typeflag == tar.TypeReg {
			if err := copyFile(tw, e.src); err != nil {
				return err
			}
		}
	}
	return tw.Close()
}

func copyFile(w io.Writer, name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

// build returns l as a layer, its compressed blob kept in dir under the
// digest of its tar (the diffID). The tar is made twice on a miss, once to
// name it and once to compress it, so a hit costs one read of the files and
// no compression: what makes a large host toolchain cheap to reuse.
func (l Layer) build(dir string, mediaType types.MediaType) (v1.Layer, error) {
	entries, err := l.entries()
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	if err := l.writeTar(h, entries); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	info, err := readInfo(blobFile(dir, sum(h)) + ".json")
	if err != nil {
		if info, err = l.compress(dir, entries); err != nil {
			return nil, err
		}
	}
	return openLayer(dir, info, mediaType)
}

// blobInfo is what a registry and a manifest need of a layer blob,
// measured while it is written and kept beside it (FILE.json), so that
// reusing a layer of hundreds of megabytes reads none of it.
type blobInfo struct {
	Digest v1.Hash `json:"digest"`
	DiffID v1.Hash `json:"diffID"`
	Size   int64   `json:"size"`
}

// blobFile is where a layer blob is kept: named by its content, so that a
// file once written never changes, even when two processes build layers
// that differ (two debootstraps of one description) at the same time.
func blobFile(dir string, diffID v1.Hash) string {
	return filepath.Join(dir, diffID.Algorithm+"-"+diffID.Hex+".tar.gz")
}

// compress writes l's entries into dir as a gzipped tar, then its blobInfo
// beside it; the info is written last, so a blob without one is
// incomplete and made again.
func (l Layer) compress(dir string, entries []entry) (blobInfo, error) {
	var info blobInfo
	tmp := filepath.Join(dir, "layer")
	err := writeAtomic(tmp, func(w io.Writer) error {
		digest, diffID := sha256.New(), sha256.New()
		counted := &countingWriter{w: io.MultiWriter(w, digest)}
		zw, err := gzip.NewWriterLevel(counted, gzip.BestSpeed)
		if err != nil {
			return err
		}
		if err := l.writeTar(io.MultiWriter(zw, diffID), entries); err != nil {
			return err
		}
		if err := zw.Close(); err != nil {
			return err
		}
		info = blobInfo{Digest: sum(digest), DiffID: sum(diffID), Size: counted.n}
		return nil
	}, func(string) string { return blobFile(dir, info.DiffID) })
	if err == nil {
		err = writeInfo(blobFile(dir, info.DiffID)+".json", info)
	}
	if err != nil {
		return blobInfo{}, fmt.Errorf("layer: %w", err)
	}
	return info, nil
}

func writeInfo(file string, info blobInfo) error {
	return writeAtomic(file, func(w io.Writer) error { return json.NewEncoder(w).Encode(info) }, nil)
}

func readInfo(file string) (blobInfo, error) {
	var info blobInfo
	data, err := os.ReadFile(file)
	if err == nil {
		err = json.Unmarshal(data, &info)
	}
	return info, err
}

func sum(h hash.Hash) v1.Hash {
	return v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(h.Sum(nil))}
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// fileLayer is a layer blob written by compress.
type fileLayer struct {
	file      string
	info      blobInfo
	mediaType types.MediaType
}

func (f fileLayer) Digest() (v1.Hash, error)            { return f.info.Digest, nil }
func (f fileLayer) DiffID() (v1.Hash, error)            { return f.info.DiffID, nil }
func (f fileLayer) Size() (int64, error)                { return f.info.Size, nil }
func (f fileLayer) MediaType() (types.MediaType, error) { return f.mediaType, nil }
func (f fileLayer) Compressed() (io.ReadCloser, error)  { return os.Open(f.file) }

// openLayer is the blob info describes, kept in dir by compress, as a
// layer of the given media type (the same gzipped tar is either).
func openLayer(dir string, info blobInfo, mediaType types.MediaType) (v1.Layer, error) {
	file := blobFile(dir, info.DiffID)
	if _, err := os.Stat(file); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	return partial.CompressedToLayer(fileLayer{file: file, info: info, mediaType: mediaType})
}

// writeAtomic writes name through a temporary file beside it, renamed into
// place when complete, so that a killed build never leaves a truncated
// layer that a later run would take for a cached one. rename, when not
// nil, names the file once it is written (a blob is named by its digest).
func writeAtomic(name string, write func(io.Writer) error, rename func(string) string) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(name), ".tmp-"+filepath.Base(name)+"-")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	if rename != nil {
		name = rename(name)
	}
	return os.Rename(f.Name(), name)
}
