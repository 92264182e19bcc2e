package admin

import (
	"io"
	"strings"
	"unicode/utf8"
)

// ANSI colours for terminal output.
const (
	ansiGreen  = "\x1b[32m"
	ansiRed    = "\x1b[31m"
	ansiYellow = "\x1b[33m"
	ansiReset  = "\x1b[0m"
)

// cell is one table cell: text, and the ANSI colour to show it in (if the
// table is coloured at all).
type cell struct {
	text  string
	color string
}

// table lays out rows in columns. Unlike text/tabwriter it measures the
// plain text, so colour escapes do not disturb the alignment.
type table struct {
	rows   [][]cell
	widths []int
}

func (t *table) add(row ...cell) {
	for i, c := range row {
		if i == len(t.widths) {
			t.widths = append(t.widths, 0)
		}
		t.widths[i] = max(t.widths[i], utf8.RuneCountInString(c.text))
	}
	t.rows = append(t.rows, row)
}

// line renders row i with indent, two spaces between columns, and no
// trailing blanks.
func (t *table) line(i int, indent string, color bool) string {
	var b strings.Builder
	b.WriteString(indent)
	for j, c := range t.rows[i] {
		if j > 0 {
			b.WriteString("  ")
		}
		if color && c.color != "" && c.text != "" {
			b.WriteString(c.color + c.text + ansiReset)
		} else {
			b.WriteString(c.text)
		}
		b.WriteString(strings.Repeat(" ", t.widths[j]-utf8.RuneCountInString(c.text)))
	}
	return strings.TrimRight(b.String(), " ") + "\n"
}

func (t *table) write(w io.Writer, indent string, color bool) {
	for i := range t.rows {
		io.WriteString(w, t.line(i, indent, color))
	}
}

func plain(s string) cell { return cell{text: s} }
