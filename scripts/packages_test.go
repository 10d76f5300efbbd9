package scripts

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
)

// listFile is the one list of Debian packages the tests need; .ci/run and
// test-all.sh install from it.
const listFile = "test-packages.txt"

// Every command a test of the three modules cannot do without is provided
// by a package of the list, and every Debian package a test names is in it:
// otherwise CI, which installs the list on a fresh machine, fails in that
// test after minutes of others.
func TestPackageListCoversTests(t *testing.T) {
	list := readPackageList(t, listFile)
	// This file's fixtures are examples, not requirements.
	found, err := scan(os.DirFS(".."), "scripts/packages_test.go")
	if err != nil {
		t.Fatal(err)
	}
	if len(found.required) == 0 {
		t.Fatal("the scan found no command that a test requires")
	}
	for _, p := range found.problems {
		t.Error(p)
	}
	for _, r := range found.required {
		pkg, ok := list.byCommand[r.command]
		switch {
		case !ok:
			t.Errorf("%s: the test requires %s, which no package of scripts/%s provides: add its Debian package and the command there",
				r.pos, r.command, listFile)
		case r.pkg != "" && r.pkg != pkg:
			t.Errorf("%s: the test names Debian package %s for %s, but scripts/%s has %s in %s",
				r.pos, r.pkg, r.command, listFile, r.command, pkg)
		}
	}
	for _, m := range found.mentions {
		if !list.packages[m.pkg] {
			t.Errorf("%s: the test names Debian package %s, which scripts/%s lacks", m.pos, m.pkg, listFile)
		}
	}
}

// The scan finds a required command however a test looks for it, and
// leaves out those a test does without.
func TestScanFindsRequiredCommands(t *testing.T) {
	fsys := fstest.MapFS{}
	for name, src := range map[string]string{
		"go.mod": "module example.com/m\n",
		"e2e/e2e.go": `package e2e

import (
	"os/exec"
	"testing"
)

func SkipOrFail(t testing.TB, format string, args ...any) {}

// Tool is a lookup helper another package calls.
func Tool(t testing.TB, name, pkg string) string {
	p, err := exec.LookPath(name)
	if err != nil {
		SkipOrFail(t, "%s is not installed (Debian package %s)", name, pkg)
	}
	return p
}

// Has looks without requiring: its callers do not count.
func Has(name string) bool {
	if _, err := exec.LookPath(name); err != nil {
		return false
	}
	return true
}
`,
		"e2e/prod.go": `package e2e

import "os/exec"

// Not a test helper: no import of testing.
func Run() { exec.LookPath("production-only") }
`,
		"a/a_test.go": `package a

import (
	"os/exec"
	"testing"

	"example.com/m/e2e"
	osexec "os/exec"
)

func TestLiteral(t *testing.T) {
	if _, err := exec.LookPath("xmllint"); err != nil {
		e2e.SkipOrFail(t, "xmllint is not installed (Debian package libxml2-utils)")
	}
}

func TestAssignedThenChecked(t *testing.T) {
	p, err := osexec.LookPath("promtool")
	if err != nil {
		t.Fatalf("no promtool: %v", err)
	}
	_ = p
}

func TestLoop(t *testing.T) {
	for _, tool := range []string{"qemu-system-x86_64", "debootstrap"} {
		if _, err := exec.LookPath(tool); err != nil {
			e2e.SkipOrFail(t, "%s is not installed", tool)
		}
	}
	for tool, pkg := range map[string]string{"mkfs.ext4": "e2fsprogs"} {
		if _, err := exec.LookPath(tool); err != nil {
			e2e.SkipOrFail(t, "%s is not installed (Debian package %s)", tool, pkg)
		}
	}
}

func TestOptional(t *testing.T) {
	if docker, err := exec.LookPath("docker"); err == nil {
		_ = docker
	} else {
		t.Skip("no docker")
	}
	if _, err := exec.LookPath("zdb"); err == nil {
		t.Errorf("ashift")
	}
	pgrep, err := exec.LookPath("pgrep")
	if err != nil {
		t.Log("no pgrep")
		return
	}
	_ = pgrep
	_ = e2e.Has("tshark")
}

func TestHelpers(t *testing.T) {
	e2e.Tool(t, "chromium", "chromium")
	for _, sh := range []string{"dash", "sh"} {
		tool(t, sh, "dash")
	}
	wrapped(t, "systemd-analyze")
}

func tool(t *testing.T, name, pkg string) string {
	return e2e.Tool(t, name, pkg)
}

func wrapped(t *testing.T, cmd string) { tool(t, cmd, "systemd") }

func TestDynamic(t *testing.T) {
	name := pick()
	if _, err := exec.LookPath(name); err != nil {
		t.Fatal(err)
	}
}
`,
		"guest/walk_test.go": "//go:build openzfsguest\n\npackage guest\n\nimport (\n\t\"os/exec\"\n\t\"testing\"\n)\n\nfunc TestGuest(t *testing.T) {\n\tif _, err := exec.LookPath(\"zinject\"); err != nil {\n\t\tt.Fatal(err)\n\t}\n}\n",
		"sub/go.mod":         "module example.com/m/sub\n",
		"sub/x_test.go": `package sub

import (
	"os/exec"
	"testing"
)

func TestOtherModule(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("git is needed (Debian packages git and git-man)")
	}
}
`,
		"testdata/x_test.go": "package x\n\nimport (\n\t\"os/exec\"\n\t\"testing\"\n)\n\nfunc TestX(t *testing.T) { exec.LookPath(\"ignored\") }\n",
	} {
		fsys[name] = &fstest.MapFile{Data: []byte(src)}
	}
	found, err := scan(fsys, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range found.required {
		got = append(got, fmt.Sprintf("%s %s %s", r.pos, r.command, r.pkg))
	}
	want := []string{
		"a/a_test.go:12 xmllint ",
		"a/a_test.go:18 promtool ",
		"a/a_test.go:27 qemu-system-x86_64 ",
		"a/a_test.go:27 debootstrap ",
		"a/a_test.go:32 mkfs.ext4 ",
		"a/a_test.go:57 chromium chromium",
		"a/a_test.go:59 dash dash",
		"a/a_test.go:59 sh dash",
		"a/a_test.go:61 systemd-analyze systemd",
		"sub/x_test.go:9 git ",
	}
	if !slices.Equal(got, want) {
		t.Errorf("required:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var mentions []string
	for _, m := range found.mentions {
		mentions = append(mentions, m.pos+" "+m.pkg)
	}
	wantMentions := []string{"a/a_test.go:13 libxml2-utils", "sub/x_test.go:10 git", "sub/x_test.go:10 git-man"}
	if !slices.Equal(mentions, wantMentions) {
		t.Errorf("mentions %q, want %q", mentions, wantMentions)
	}
	wantProblems := []string{"a/a_test.go:72: cannot tell which command exec.LookPath(name) looks for: name it in a string literal"}
	if !slices.Equal(found.problems, wantProblems) {
		t.Errorf("problems %q, want %q", found.problems, wantProblems)
	}
}

// The list's format: a package twice, a command under two packages and a
// name that is no Debian package's are mistakes.
func TestReadPackageListRejects(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"git git\ngit git\n", "line 2: git listed twice"},
		{"mount losetup\nutil-linux losetup\n", "line 2: losetup is already under mount"},
		{"Git git\n", `line 1: "Git" is not a Debian package name`},
	} {
		if _, err := parsePackageList(strings.NewReader(tc.text)); err == nil || err.Error() != tc.want {
			t.Errorf("%q: error %v, want %q", tc.text, err, tc.want)
		}
	}
}

// packageList is the parsed list.
type packageList struct {
	packages  map[string]bool
	byCommand map[string]string // command -> the package that provides it
}

func readPackageList(t *testing.T, file string) packageList {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	list, err := parsePackageList(f)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return list
}

var debianName = regexp.MustCompile(`^[a-z0-9][a-z0-9+.-]+$`)

// parsePackageList reads the list as the scripts do: the first word of a
// line is the package, the others its commands; blank lines and lines
// starting with # are skipped.
func parsePackageList(r io.Reader) (packageList, error) {
	list := packageList{packages: map[string]bool{}, byCommand: map[string]string{}}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		pkg := fields[0]
		switch {
		case !debianName.MatchString(pkg):
			return list, fmt.Errorf("line %d: %q is not a Debian package name", n, pkg)
		case list.packages[pkg]:
			return list, fmt.Errorf("line %d: %s listed twice", n, pkg)
		}
		list.packages[pkg] = true
		for _, cmd := range fields[1:] {
			if other, ok := list.byCommand[cmd]; ok {
				return list, fmt.Errorf("line %d: %s is already under %s", n, cmd, other)
			}
			list.byCommand[cmd] = pkg
		}
	}
	return list, sc.Err()
}

// requirement is a command a test cannot do without.
type requirement struct {
	pos     string // file:line of the look-up, or of the call to a lookup helper
	command string
	pkg     string // the package the test passes along for it, if any
}

// mention is a Debian package named in a string of a test.
type mention struct {
	pos string
	pkg string
}

type findings struct {
	required []requirement
	mentions []mention
	problems []string // look-ups whose command the scan cannot tell
}

// A string naming Debian packages, as skip messages do: "(Debian package
// libxml2-utils)", "(Debian packages qemu-system-x86, debootstrap)".
var (
	debianMention    = regexp.MustCompile(`Debian packages? ([a-z0-9][a-z0-9+.-]+(?:(?:, | and | or )[a-z0-9][a-z0-9+.-]+)*)`)
	mentionSeparator = regexp.MustCompile(`, | and | or `)
)

// hostBuild is the build context of the tests CI runs on the host: Linux,
// with the testbed tag. Files tagged openzfsguest run inside the OpenZFS
// guest, whose packages build-image.sh installs.
var hostBuild = func() build.Context {
	c := build.Default
	c.GOOS, c.GOARCH = "linux", "amd64"
	c.BuildTags = []string{"testbed"}
	return c
}()

// goFile is a parsed test file, or a file of a package that helps tests
// (it imports testing).
type goFile struct {
	name       string // slash-separated, from the tree's root
	importPath string // of its directory's package
	src        []byte
	fset       *token.FileSet
	ast        *ast.File
	imports    map[string]string // local name -> import path
}

// lookupHelper is a function that requires the command its parameter
// names: tests/deploy's tool(t, "xmllint", "libxml2-utils").
type lookupHelper struct {
	command int    // index of the parameter naming the command
	pkg     int    // index of the parameter named pkg, or -1
	pkgName string // the package a wrapper passes on for every command
}

// scan reads the Go files of the tree that a host's test run compiles, in
// every module of it, and returns the commands their tests require and the
// Debian packages they name; skip is a file to leave out.
//
// A test requires a command when it looks it up with exec.LookPath and
// fails (SkipOrFail, Fatal) without it, or calls a helper that does so for
// its argument. A look-up whose absence only skips the test or logs (docker
// compose, zdb's ashift) is not a requirement.
func scan(fsys fs.FS, skip string) (*findings, error) {
	files, err := parseTree(fsys, skip)
	if err != nil {
		return nil, err
	}
	s := &scanner{helpers: map[string]lookupHelper{}}
	// A helper may wrap another: scan until no new helper turns up, keeping
	// only the last round's findings.
	for {
		s.found = &findings{}
		before := len(s.helpers)
		for _, f := range files {
			s.file(f)
		}
		if len(s.helpers) == before {
			return s.found, nil
		}
	}
}

func parseTree(fsys fs.FS, skip string) ([]*goFile, error) {
	ctx := hostBuild
	ctx.OpenFile = func(p string) (io.ReadCloser, error) { return fsys.Open(p) }
	ctx.JoinPath = path.Join
	var files []*goFile
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			// The go command ignores these directories too.
			if p != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor") {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || p == skip {
			return nil
		}
		if ok, err := ctx.MatchFile(path.Dir(p), name); err != nil || !ok {
			return err
		}
		src, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, p, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		imports := map[string]string{}
		helpsTests := strings.HasSuffix(name, "_test.go")
		for _, spec := range file.Imports {
			ip, _ := strconv.Unquote(spec.Path.Value)
			local := path.Base(ip)
			if spec.Name != nil {
				local = spec.Name.Name
			}
			imports[local] = ip
			helpsTests = helpsTests || ip == "testing"
		}
		if !helpsTests {
			return nil
		}
		ip, err := importPath(fsys, path.Dir(p))
		if err != nil {
			return err
		}
		files = append(files, &goFile{name: p, importPath: ip, src: src, fset: fset, ast: file, imports: imports})
		return nil
	})
	return files, err
}

// importPath is the import path of directory dir, from the go.mod of its
// module.
func importPath(fsys fs.FS, dir string) (string, error) {
	for d := dir; ; d = path.Dir(d) {
		data, err := fs.ReadFile(fsys, path.Join(d, "go.mod"))
		if err == nil {
			for line := range strings.Lines(string(data)) {
				if mod, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
					rel := strings.TrimPrefix(strings.TrimPrefix(dir, d), "/")
					return path.Join(strings.Trim(strings.TrimSpace(mod), `"`), rel), nil
				}
			}
			return "", fmt.Errorf("%s/go.mod: no module line", d)
		}
		if d == "." {
			return "", fmt.Errorf("%s: no go.mod above it", dir)
		}
	}
}

type scanner struct {
	found   *findings
	helpers map[string]lookupHelper // import path + "." + function name
}

func (s *scanner) file(f *goFile) {
	ast.PreorderStack(f.ast, nil, func(n ast.Node, stack []ast.Node) bool {
		switch n := n.(type) {
		case *ast.BasicLit:
			if n.Kind == token.STRING {
				s.mentions(f, n)
			}
		case *ast.CallExpr:
			if f.isLookPath(n.Fun) && len(n.Args) == 1 {
				s.lookPath(f, n, stack)
			} else if key, h, ok := s.helperCall(f, n); ok && len(n.Args) > h.command {
				s.helperUse(f, n, stack, key, h)
			}
		}
		return true
	})
}

func (s *scanner) mentions(f *goFile, lit *ast.BasicLit) {
	text, err := strconv.Unquote(lit.Value)
	if err != nil {
		return
	}
	for _, m := range debianMention.FindAllStringSubmatch(text, -1) {
		for _, pkg := range mentionSeparator.Split(m[1], -1) {
			s.found.mentions = append(s.found.mentions, mention{pos: f.pos(lit), pkg: pkg})
		}
	}
}

func (s *scanner) lookPath(f *goFile, call *ast.CallExpr, stack []ast.Node) {
	if !failsWithout(call, stack) {
		return
	}
	commands, param, ok := resolve(call.Args[0], stack)
	switch {
	case ok && param.index >= 0:
		s.helpers[f.importPath+"."+param.fn.Name.Name] = lookupHelper{command: param.index, pkg: param.pkg}
	case ok:
		for _, c := range commands {
			s.found.required = append(s.found.required, requirement{pos: f.pos(call), command: c})
		}
	default:
		s.found.problems = append(s.found.problems, fmt.Sprintf("%s: cannot tell which command exec.LookPath(%s) looks for: name it in a string literal",
			f.pos(call), f.source(call.Args[0])))
	}
}

// helperUse records a call to a lookup helper; a call that passes on its
// own parameter makes its function a helper too.
func (s *scanner) helperUse(f *goFile, call *ast.CallExpr, stack []ast.Node, key string, h lookupHelper) {
	pkg := h.pkgName
	if h.pkg >= 0 && h.pkg < len(call.Args) {
		if lit, ok := call.Args[h.pkg].(*ast.BasicLit); ok && lit.Kind == token.STRING {
			pkg, _ = strconv.Unquote(lit.Value)
		}
	}
	commands, param, ok := resolve(call.Args[h.command], stack)
	switch {
	case ok && param.index >= 0:
		wrapper := lookupHelper{command: param.index, pkg: param.pkg, pkgName: pkg}
		if pkg != "" {
			wrapper.pkg = -1
		}
		s.helpers[f.importPath+"."+param.fn.Name.Name] = wrapper
	case ok:
		for _, c := range commands {
			s.found.required = append(s.found.required, requirement{pos: f.pos(call), command: c, pkg: pkg})
		}
	default:
		s.found.problems = append(s.found.problems, fmt.Sprintf("%s: cannot tell which command %s(%s) requires: name it in a string literal",
			f.pos(call), key, f.source(call.Args[h.command])))
	}
}

// helperCall reports whether call calls a known lookup helper, by its own
// package's name or through an import.
func (s *scanner) helperCall(f *goFile, call *ast.CallExpr) (string, lookupHelper, bool) {
	var key string
	switch fun := call.Fun.(type) {
	case *ast.Ident:
		key = f.importPath + "." + fun.Name
	case *ast.SelectorExpr:
		x, ok := fun.X.(*ast.Ident)
		if !ok || f.imports[x.Name] == "" {
			return "", lookupHelper{}, false
		}
		key = f.imports[x.Name] + "." + fun.Sel.Name
	default:
		return "", lookupHelper{}, false
	}
	h, ok := s.helpers[key]
	return key, h, ok
}

func (f *goFile) isLookPath(fun ast.Expr) bool {
	sel, ok := fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "LookPath" {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && f.imports[x.Name] == "os/exec"
}

func (f *goFile) pos(n ast.Node) string {
	p := f.fset.Position(n.Pos())
	return fmt.Sprintf("%s:%d", f.name, p.Line)
}

func (f *goFile) source(n ast.Node) string {
	return string(f.src[f.fset.Position(n.Pos()).Offset:f.fset.Position(n.End()).Offset])
}

// failsWithout reports whether the test fails, or skips only outside CI,
// when the look-up finds nothing: the if statement on the look-up's result
// (in its condition, or right after it) calls SkipOrFail or Fatal. A look-up
// with no such if statement counts as required.
func failsWithout(call *ast.CallExpr, stack []ast.Node) bool {
	var ifStmt *ast.IfStmt
	for i := len(stack) - 1; i >= 0; i-- {
		stmt, ok := stack[i].(ast.Stmt)
		if !ok {
			continue
		}
		if s, ok := stmt.(*ast.IfStmt); ok {
			ifStmt = s // the look-up is in its condition
			break
		}
		if i > 0 {
			switch parent := stack[i-1].(type) {
			case *ast.IfStmt:
				if parent.Init == stmt {
					ifStmt = parent
				}
			case *ast.BlockStmt:
				if j := slices.Index(parent.List, stmt); j >= 0 && j+1 < len(parent.List) {
					ifStmt, _ = parent.List[j+1].(*ast.IfStmt)
				}
			}
		}
		if ifStmt == nil {
			return true
		}
		break
	}
	if ifStmt == nil {
		return true
	}
	fails := false
	ast.Inspect(ifStmt, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			switch name := calledName(c); name {
			case "SkipOrFail", "Fatal", "Fatalf", "FailNow":
				fails = true
			}
		}
		return !fails
	})
	return fails
}

func calledName(c *ast.CallExpr) string {
	switch fun := c.Fun.(type) {
	case *ast.Ident:
		return fun.Name
	case *ast.SelectorExpr:
		return fun.Sel.Name
	}
	return ""
}

// parameter is a parameter of the function a look-up is in.
type parameter struct {
	fn    *ast.FuncDecl
	index int // -1 when the argument is no parameter
	pkg   int // index of the function's parameter named pkg, or -1
}

// resolve tells which commands an argument names: a string literal, or a
// variable ranging over a literal slice or map of them. When the argument is
// a parameter of the enclosing function, it returns that parameter instead.
func resolve(arg ast.Expr, stack []ast.Node) ([]string, parameter, bool) {
	none := parameter{index: -1, pkg: -1}
	switch arg := arg.(type) {
	case *ast.BasicLit:
		if arg.Kind != token.STRING {
			return nil, none, false
		}
		s, err := strconv.Unquote(arg.Value)
		return []string{s}, none, err == nil
	case *ast.Ident:
		for i := len(stack) - 1; i >= 0; i-- {
			switch n := stack[i].(type) {
			case *ast.RangeStmt:
				if lit, ok := n.X.(*ast.CompositeLit); ok && n.Tok == token.DEFINE {
					if isIdent(n.Value, arg.Name) {
						return stringElements(lit, false)
					}
					if _, isMap := lit.Type.(*ast.MapType); isMap && isIdent(n.Key, arg.Name) {
						return stringElements(lit, true)
					}
				}
			case *ast.FuncLit:
				return nil, none, false
			case *ast.FuncDecl:
				if n.Recv != nil {
					return nil, none, false
				}
				p := parameter{fn: n, index: -1, pkg: -1}
				i := 0
				for _, field := range n.Type.Params.List {
					for _, name := range field.Names {
						switch name.Name {
						case arg.Name:
							p.index = i
						case "pkg":
							p.pkg = i
						}
						i++
					}
				}
				return nil, p, p.index >= 0
			}
		}
	}
	return nil, none, false
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// stringElements returns the string literals of a slice literal, or the keys
// of a map literal.
func stringElements(lit *ast.CompositeLit, keys bool) ([]string, parameter, bool) {
	none := parameter{index: -1, pkg: -1}
	var out []string
	for _, e := range lit.Elts {
		if kv, ok := e.(*ast.KeyValueExpr); ok {
			if !keys {
				return nil, none, false
			}
			e = kv.Key
		}
		b, ok := e.(*ast.BasicLit)
		if !ok || b.Kind != token.STRING {
			return nil, none, false
		}
		s, err := strconv.Unquote(b.Value)
		if err != nil {
			return nil, none, false
		}
		out = append(out, s)
	}
	return out, none, true
}
