package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// initramfs is the file tree packed into the VM's initramfs: paths without
// a leading slash, mapped to a host file to copy, or to nothing for a
// directory.
type initramfs struct {
	dirs  map[string]bool
	files map[string]file
}

type file struct {
	src  string // host path, or "" for data
	data []byte
	mode uint32
}

func newInitramfs() *initramfs {
	return &initramfs{dirs: map[string]bool{}, files: map[string]file{}}
}

func (r *initramfs) dir(p string) {
	for p != "." && p != "" && !r.dirs[p] {
		r.dirs[p] = true
		if i := strings.LastIndexByte(p, '/'); i >= 0 {
			p = p[:i]
		} else {
			p = ""
		}
	}
}

// add copies the host file src to p, executable.
func (r *initramfs) add(p, src string) {
	r.parent(p)
	r.files[p] = file{src: src, mode: 0o100755}
}

// addData writes data to p.
func (r *initramfs) addData(p string, data []byte) {
	r.parent(p)
	r.files[p] = file{data: data, mode: 0o100644}
}

func (r *initramfs) parent(p string) {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		r.dir(p[:i])
	}
}

// write packs the tree as an uncompressed cpio "newc" archive, which every
// kernel unpacks without a decompressor (and without spending emulated CPU
// time on one). It adds /dev/console, which the kernel opens for /init's
// standard streams before /init runs.
func (r *initramfs) write(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	c := &cpioWriter{w: w}
	dirs := make([]string, 0, len(r.dirs))
	for d := range r.dirs {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		c.header(d, 0o040755, 0, 0, 0)
	}
	c.header("dev/console", 0o020600, 0, 5, 1)
	names := make([]string, 0, len(r.files))
	for n := range r.files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fl := r.files[n]
		data := fl.data
		if fl.src != "" {
			if data, err = os.ReadFile(fl.src); err != nil {
				f.Close()
				return err
			}
		}
		c.header(n, fl.mode, len(data), 0, 0)
		c.body(data)
	}
	c.header("TRAILER!!!", 0, 0, 0, 0)
	if c.err == nil {
		c.err = w.Flush()
	}
	if err := f.Close(); c.err == nil {
		c.err = err
	}
	return c.err
}

// cpioWriter writes newc records: a 110-byte ASCII header, the name with its
// NUL, and the data, each padded to four bytes.
type cpioWriter struct {
	w   io.Writer
	ino int
	err error
}

func (c *cpioWriter) header(name string, mode uint32, size int, rmaj, rmin int) {
	c.ino++
	nlink := 1
	if mode&0o170000 == 0o040000 {
		nlink = 2
	}
	h := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		c.ino, mode, 0, 0, nlink, 0, size, 0, 0, rmaj, rmin, len(name)+1, 0)
	c.put([]byte(h + name + "\x00"))
	c.pad(len(h) + len(name) + 1)
}

func (c *cpioWriter) body(data []byte) {
	c.put(data)
	c.pad(len(data))
}

func (c *cpioWriter) pad(n int) {
	if r := n % 4; r != 0 {
		c.put(make([]byte, 4-r))
	}
}

func (c *cpioWriter) put(b []byte) {
	if c.err == nil {
		_, c.err = c.w.Write(b)
	}
}
