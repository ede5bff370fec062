# c_scan.awk: the one C function scanner of the file checks
# (check_func_length.sh, check_files.sh).  Run as
#   awk -v mode=lengths -f c_scan.awk FILE...   "LINES FILE:LINE NAME" per function
#   awk -v mode=uses -f c_scan.awk FILE...      "D FILE NAME" per non-static and
#                                               "S FILE NAME" per static function
#                                               definition, "U FILE IDENT" per
#                                               identifier used (once per file)
# How a function is found: comments, string and character literals and
# preprocessor lines (with their backslash continuations) are dropped,
# brace depth is counted, and every brace that opens depth 1 after a
# header ending in ')' with no '=' in it is a function body.  The name is
# the identifier before the header's first '('; `static` as the header's
# first word makes it file-local.  A length counts the lines from the line
# holding the header's first '(' to the closing brace, both included.
# Limits: a function whose header is made by a macro, a body opened or
# closed inside an #if branch with an unbalanced twin, and K&R-style
# definitions are not measured correctly (wisp has none); uses are
# identifiers, so a call through a function pointer set in another file is
# not seen.  Cost: one pass per file, O(characters).
FNR == 1 { depth = 0; incom = 0; hdr = ""; hdrline = 0; pp = 0; infunc = 0; delete seen }
{
  line = $0
  # Preprocessor lines and their continuations carry no function bodies.
  if (pp || (!incom && line ~ /^[ \t]*#/)) { pp = (line ~ /\\$/); next }
  n = length(line); toks = ""
  for (i = 1; i <= n; i++) {
    c = substr(line, i, 1)
    if (incom) {
      if (c == "*" && substr(line, i + 1, 1) == "/") { incom = 0; i++ }
      continue
    }
    if (c == "/" && substr(line, i + 1, 1) == "*") { incom = 1; i++; continue }
    if (c == "/" && substr(line, i + 1, 1) == "/") break
    if (c == "\"" || c == "\047") {
      q = c
      for (i++; i <= n; i++) {
        d = substr(line, i, 1)
        if (d == "\\") { i++; continue }
        if (d == q) break
      }
      toks = toks " "; if (depth == 0) hdr = hdr " "
      continue
    }
    if (c == "{") {
      if (depth == 0) {
        h = hdr; gsub(/[ \t]+$/, "", h); gsub(/^[ \t]+/, "", h)
        # Attributes after the parameter list (G_GNUC_*) are not expected on definitions.
        if (h ~ /\)$/ && h !~ /=/) {
          p = index(h, "("); pre = substr(h, 1, p - 1); gsub(/[ \t*]+$/, "", pre)
          if (match(pre, /[A-Za-z_][A-Za-z0-9_]*$/)) {
            fname = substr(pre, RSTART, RLENGTH); infunc = 1; start = hdrline
            if (mode == "uses") print (h ~ /^static[ \t]/ ? "S" : "D"), FILENAME, fname
          }
        }
      }
      depth++; hdr = ""; toks = toks " "
      continue
    }
    if (c == "}") {
      depth--
      if (depth == 0) {
        if (infunc && mode != "uses") printf "%d %s:%d %s\n", FNR - start + 1, FILENAME, start, fname
        infunc = 0; hdr = ""; hdrline = 0
      }
      toks = toks " "
      continue
    }
    if (c == ";" && depth == 0) { hdr = ""; hdrline = 0; toks = toks " "; continue }
    if (depth == 0) {
      if (hdrline == 0 && c !~ /[ \t]/) hdrline = FNR
      # The line of the name: the line where the first "(" of the header appears.
      if (c == "(" && index(hdr, "(") == 0) hdrline = FNR
      hdr = hdr c
    }
    toks = toks c
  }
  if (depth == 0 && hdr != "") hdr = hdr " "
  if (mode == "uses")
    while (match(toks, /[A-Za-z_][A-Za-z0-9_]*/)) {
      w = substr(toks, RSTART, RLENGTH); toks = substr(toks, RSTART + RLENGTH)
      if (!(w in seen)) { seen[w] = 1; print "U", FILENAME, w }
    }
}
