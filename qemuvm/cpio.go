package qemuvm

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// entryKind tells what an archive entry is.
type entryKind int

const (
	kindDir entryKind = iota
	kindFile
	kindSymlink
)

// entry is one member of the initramfs tree.
type entry struct {
	kind entryKind
	mode uint32 // permission bits only
	// For files: either hostPath (read when the archive is written) or data.
	hostPath string
	data     []byte
	// For symlinks: the link target, exactly as stored.
	target string
}

// tree is an in-memory description of the initramfs: absolute guest
// paths (without the leading slash) mapped to entries. Parent
// directories are created as needed.
type tree struct {
	entries map[string]*entry
}

func newTree() *tree {
	return &tree{entries: map[string]*entry{}}
}

// clean turns a guest path into the archive's canonical form ("a/b").
func clean(p string) string {
	return strings.TrimPrefix(path.Clean("/"+p), "/")
}

// mkdirAll records p and its parents as directories. It fails when a
// component already exists as something other than a directory.
func (t *tree) mkdirAll(p string) error {
	p = clean(p)
	if p == "" {
		return nil
	}
	if e, ok := t.entries[p]; ok {
		if e.kind != kindDir {
			return fmt.Errorf("initramfs: %q is wanted as a directory but already holds a %s", "/"+p, e.kind)
		}
		return nil
	}
	if err := t.mkdirAll(path.Dir(p)); err != nil {
		return err
	}
	t.entries[p] = &entry{kind: kindDir, mode: 0o755}
	return nil
}

func (k entryKind) String() string {
	switch k {
	case kindDir:
		return "directory"
	case kindFile:
		return "file"
	default:
		return "symlink"
	}
}

// put adds a non-directory entry. Adding the same path twice is
// allowed only when both entries are equivalent.
func (t *tree) put(p string, e *entry) error {
	p = clean(p)
	if p == "" {
		return fmt.Errorf("initramfs: cannot place a %s at /", e.kind)
	}
	if old, ok := t.entries[p]; ok {
		if old.kind == e.kind && old.target == e.target && old.hostPath == e.hostPath && bytes.Equal(old.data, e.data) {
			return nil
		}
		return fmt.Errorf("initramfs: %q added twice (a %s, then a %s)", "/"+p, old.kind, e.kind)
	}
	if err := t.mkdirAll(path.Dir(p)); err != nil {
		return err
	}
	t.entries[p] = e
	return nil
}

// addData adds a file with the given contents.
func (t *tree) addData(p string, data []byte, mode uint32) error {
	return t.put(p, &entry{kind: kindFile, data: data, mode: mode})
}

// addHostFileAs copies the host file src (following symlinks) to the
// guest path dst.
func (t *tree) addHostFileAs(dst, src string, mode uint32) error {
	st, err := os.Stat(src)
	if err != nil {
		return fmt.Errorf("initramfs: stat %s: %w", src, err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("initramfs: %s is not a regular file (mode %s)", src, st.Mode())
	}
	if mode == 0 {
		mode = uint32(st.Mode().Perm())
	}
	return t.put(dst, &entry{kind: kindFile, hostPath: src, mode: mode})
}

// addHostPath copies the absolute host path p into the guest at the
// same path, reproducing every symlink met on the way (for instance
// /lib -> usr/lib on merged-/usr systems) so that the dynamic loader
// finds files under the names ldd printed.
func (t *tree) addHostPath(p string) error {
	return t.addHostPathDepth(p, 0)
}

func (t *tree) addHostPathDepth(p string, depth int) error {
	if depth > 40 {
		return fmt.Errorf("initramfs: too many levels of symbolic links resolving %s", p)
	}
	if !filepath.IsAbs(p) {
		return fmt.Errorf("initramfs: host path %q is not absolute", p)
	}
	p = filepath.Clean(p)
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	cur := "/"
	for i, part := range parts {
		next := filepath.Join(cur, part)
		fi, err := os.Lstat(next)
		if err != nil {
			return fmt.Errorf("initramfs: lstat %s (while adding %s): %w", next, p, err)
		}
		last := i == len(parts)-1
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(next)
			if err != nil {
				return fmt.Errorf("initramfs: readlink %s: %w", next, err)
			}
			if err := t.put(next, &entry{kind: kindSymlink, target: target, mode: 0o777}); err != nil {
				return err
			}
			resolved := target
			if !filepath.IsAbs(resolved) {
				resolved = filepath.Join(cur, target)
			}
			rest := filepath.Join(append([]string{resolved}, parts[i+1:]...)...)
			return t.addHostPathDepth(rest, depth+1)
		case fi.IsDir():
			if last {
				return fmt.Errorf("initramfs: %s is a directory, expected a file", p)
			}
			if err := t.mkdirAll(next); err != nil {
				return err
			}
		case fi.Mode().IsRegular():
			if !last {
				return fmt.Errorf("initramfs: %s is a file but %s continues below it", next, p)
			}
			return t.put(next, &entry{kind: kindFile, hostPath: next, mode: uint32(fi.Mode().Perm())})
		default:
			return fmt.Errorf("initramfs: %s has unsupported mode %s", next, fi.Mode())
		}
		cur = next
	}
	return nil
}

// has reports whether the guest path exists in the tree.
func (t *tree) has(p string) bool {
	_, ok := t.entries[clean(p)]
	return ok
}

// writeCpio writes the tree as a newc ("070701") cpio archive.
// Entries are emitted in lexical order, which places every directory
// before its contents.
func (t *tree) writeCpio(w io.Writer) error {
	names := make([]string, 0, len(t.entries))
	for n := range t.entries {
		names = append(names, n)
	}
	sort.Strings(names)
	cw := &cpioWriter{w: w, ino: 1}
	for _, n := range names {
		e := t.entries[n]
		var err error
		switch e.kind {
		case kindDir:
			err = cw.write(n, 0o040000|e.mode, nil)
		case kindSymlink:
			err = cw.write(n, 0o120000|0o777, []byte(e.target))
		case kindFile:
			data := e.data
			if e.hostPath != "" {
				data, err = os.ReadFile(e.hostPath)
				if err != nil {
					return fmt.Errorf("initramfs: read %s: %w", e.hostPath, err)
				}
			}
			err = cw.write(n, 0o100000|e.mode, data)
		}
		if err != nil {
			return err
		}
	}
	return cw.write("TRAILER!!!", 0, nil)
}

// writeGzipCpio writes the tree as a gzip-compressed newc archive to
// the file at dst.
func (t *tree) writeGzipCpio(dst string) error {
	f, err := os.Create(dst)
	if err != nil {
		return fmt.Errorf("initramfs: create %s: %w", dst, err)
	}
	zw, err := gzip.NewWriterLevel(f, gzip.BestSpeed)
	if err != nil {
		f.Close()
		return err
	}
	if err := t.writeCpio(zw); err != nil {
		f.Close()
		return err
	}
	if err := zw.Close(); err != nil {
		f.Close()
		return fmt.Errorf("initramfs: compress %s: %w", dst, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("initramfs: write %s: %w", dst, err)
	}
	return nil
}

// cpioWriter emits newc headers and padding.
type cpioWriter struct {
	w   io.Writer
	ino uint32
}

func (c *cpioWriter) write(name string, mode uint32, data []byte) error {
	nlink := uint32(1)
	if mode&0o170000 == 0o040000 {
		nlink = 2
	}
	ino := c.ino
	c.ino++
	if name == "TRAILER!!!" {
		ino = 0
	}
	hdr := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		ino, mode, 0, 0, nlink, 0, len(data), 0, 0, 0, 0, len(name)+1, 0)
	buf := make([]byte, 0, len(hdr)+len(name)+8)
	buf = append(buf, hdr...)
	buf = append(buf, name...)
	buf = append(buf, 0)
	buf = append(buf, make([]byte, pad4(len(buf)))...)
	if _, err := c.w.Write(buf); err != nil {
		return fmt.Errorf("initramfs: write cpio header for %s: %w", name, err)
	}
	if len(data) > 0 {
		if _, err := c.w.Write(data); err != nil {
			return fmt.Errorf("initramfs: write cpio data for %s: %w", name, err)
		}
		if _, err := c.w.Write(make([]byte, pad4(len(data)))); err != nil {
			return err
		}
	}
	return nil
}

func pad4(n int) int { return (4 - n%4) % 4 }
