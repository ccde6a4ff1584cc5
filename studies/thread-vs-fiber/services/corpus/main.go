// Command corpus writes the thread-vs-fiber image corpus: a JPEG and a PNG
// at each target size (the paper's 17 KB to 128 KB, then 256 KB, 1 MB and
// 4 MB), each within 5% of its target (KB = 1000 bytes), named like
// png-0128k.png and jpg-1m.jpg. The same Go
// release always writes the same bytes.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
)

func main() {
	out := flag.String("out", "corpus", "output directory")
	flag.Parse()
	if err := write(*out); err != nil {
		log.Fatal(err)
	}
}

func write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	for _, f := range Formats {
		for _, size := range Sizes {
			data, err := Generate(f, size)
			if err != nil {
				return err
			}
			path := filepath.Join(dir, FileName(f, size))
			if err := os.WriteFile(path, data, 0o644); err != nil {
				return fmt.Errorf("write %s: %w", path, err)
			}
			fmt.Printf("%s %d bytes\n", path, len(data))
		}
	}
	return nil
}
