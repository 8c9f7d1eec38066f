"""Drivers for standard-library modules outside the realworld evaluation (`tracegen.realworld.DRIVERS`),
built into programs of the same two kinds (a long file; ``main.py`` importing ``<module>_impl.py``):

- `DEV_DRIVERS`: the dev slice of that kind (``tracegen realworld --split dev``), where choices about the
  realworld figures are made. Its modules are never training user code (`tracegen.sources` refuses them).
- `TRAIN_DRIVERS`: training programs of that kind (``--sources realworld-train``).

Each driver is plain statements using the module's public names unqualified; deterministic, no I/O, no clock,
no randomness that is not seeded. The three sets of modules are disjoint (tests/test_realworld.py).
"""
from __future__ import annotations

DEV_DRIVERS: dict[str, str] = {
    "getopt": "opts, args = getopt(['-a', '-b', '7', 'file.txt'], 'ab:')\nlong_opts, rest = gnu_getopt(['x', '--size=3', '-v'], 'v', ['size='])\n",
    "genericpath": "common = commonprefix(['/usr/lib/python', '/usr/local/lib', '/usr/lib'])\nroot, ext = _splitext('archive.tar.gz', '/', None, '.')\n",
    "nturl2path": "p = url2pathname('///C:/Program%20Files/app.exe')\nu = pathname2url('C:\\\\Users\\\\me\\\\notes.txt')\n",
    "rlcompleter": "c = Completer({'alpha': 1, 'alps': [2], 'beta': 3})\nfirst = c.complete('al', 0)\nsecond = c.complete('al', 1)\nattrs = c.attr_matches('beta.real')\n",
    "sched": "log = []\nnow = [0]\ns = scheduler(lambda: now[0], lambda delay: now.__setitem__(0, now[0] + delay))\ns.enter(2, 1, log.append, ('late',))\ns.enter(1, 1, log.append, ('early',))\npending = len(s.queue)\ns.run()\n",
    "token": "names = [tok_name[t] for t in (NAME, NUMBER, OP)]\nterminal = ISTERMINAL(NAME)\neof = ISEOF(ENDMARKER)\n",
    "csv": "rows = list(DictReader(['name,qty', 'apple,3', 'pear,5']))\ndialect = Sniffer().sniff('a;b;c\\n1;2;3\\n')\nsep = dialect.delimiter\n",
    "ntpath": "drive, rest = splitdrive('C:\\\\temp\\\\logs\\\\app.log')\nnorm = normpath('C:/a/./b/../c')\njoined = join('C:\\\\base', 'sub', 'f.txt')\nhead, tail = split(joined)\n",
    "gettext": "plural = c2py('n != 1')\nforms = [plural(n) for n in (0, 1, 2)]\nt = NullTranslations()\nword = t.ngettext('file', 'files', 3)\n",
    "html.parser": "class Collector(HTMLParser):\n    def __init__(self):\n        super().__init__()\n        self.tags = []\n    def handle_starttag(self, tag, attrs):\n        self.tags.append((tag, dict(attrs)))\n\np = Collector()\np.feed('<p class=\"x\">Hi <b>there</b></p>')\np.close()\ntags = p.tags\n",
    "stringprep": "space = in_table_c11(' ')\nmapped = map_table_b2('\\u00c5')\nbidi = in_table_d1('\\u05d0')\n",
    "imghdr": "kind = what(None, h=b'\\x89PNG\\r\\n\\x1a\\n' + bytes(16))\ngif = what(None, h=b'GIF89a' + bytes(10))\nnone = what(None, h=b'plain text here')\n",
}

TRAIN_DRIVERS: dict[str, str] = {
    "posixpath": "p = normpath('/usr//local/./lib/../bin')\nhead, tail = split(p)\nroot, ext = splitext('report.final.pdf')\nrel = relpath('/a/b/c', '/a/d')\n",
    "base64": "enc = b64encode(b'neural debugger')\ndec = b64decode(enc)\nurl = urlsafe_b64encode(b'\\xfb\\xff')\nb32 = b32encode(b'abc')\nhexed = b16decode(b'4869')\n",
    "operator": "get = itemgetter(1, 0)\npair = get(['a', 'b'])\nname = attrgetter('real')(3)\ncall = methodcaller('split', ',')\nparts = call('x,y')\n",
    "pprint": "data = {'b': [1, 2, {'c': (3, 4)}], 'a': 'text'}\ntext = pformat(data, width=20)\nok = isreadable(data)\nrec = isrecursive(data)\n",
    "numbers": "checks = [isinstance(x, Integral) for x in (3, 2.5, True)]\nreal = issubclass(float, Real)\n",
    "contextlib": "log = []\n@contextmanager\ndef tag(name):\n    log.append('<' + name)\n    yield name.upper()\n    log.append(name + '>')\n\nwith tag('b') as t:\n    log.append(t)\nwith suppress(KeyError):\n    {}['missing']\n",
    "statistics": "xs = [2.5, 3.0, 4.5, 6.0]\nm = mean(xs)\nmed = median(xs)\nsd = stdev(xs)\nmode_ = mode([1, 2, 2, 3])\n",
    "random": "r = Random(3)\nx = r.random()\nk = r.randint(1, 6)\nitems = [1, 2, 3, 4]\nr.shuffle(items)\npick = r.choice('abc')\n",
    "email.utils": "name, addr = parseaddr('Ann Lee <ann@example.com>')\nline = formataddr(('Bob', 'bob@example.org'))\nq = quote('say \"hi\"')\n",
    "urllib.parse": "parts = urlsplit('https://ex.com:8080/p/a?q=1&r=2#top')\nquery = parse_qs(parts.query)\nback = urlencode({'q': 'a b', 'n': 3})\nfull = urljoin('http://a/b/c/d', '../e')\n",
    "functools": "@lru_cache(maxsize=4)\ndef fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n\nf10 = fib(10)\ntotal = reduce(lambda a, b: a + b, [1, 2, 3, 4])\nadd5 = partial(lambda a, b: a + b, 5)\nseven = add5(2)\n",
    "enum": "class Color(Enum):\n    RED = 1\n    GREEN = 2\n\nclass Perm(IntFlag):\n    R = 4\n    W = 2\n\nc = Color(2)\nname = c.name\nrw = Perm.R | Perm.W\n",
    "dataclasses": "@dataclass\nclass Point:\n    x: float\n    y: float = 0.0\n\np = Point(1.5)\nq = replace(p, y=2.0)\nd = asdict(q)\nnames = [f.name for f in fields(Point)]\n",
    "glob": "safe = escape('data[1]*.csv')\nmagic = has_magic('*.py')\nplain = has_magic('setup.cfg')\n",
    "types": "ns = SimpleNamespace(a=1, b='x')\nMeta = new_class('Meta', (object,), {}, lambda d: d.update(size=3))\nsize = Meta.size\nbases = resolve_bases((int,))\n",
    "tokenize": "import io\ntoks = list(generate_tokens(io.StringIO('x = 1 + y\\n').readline))\nkinds = [t.type for t in toks]\nsrc = untokenize(toks)\n",
    "_strptime": "t = _strptime_time('2024-03-05 14:30', '%Y-%m-%d %H:%M')\nday = t.tm_yday\n",
    "traceback": "try:\n    {}['k']\nexcept KeyError as exc:\n    lines = format_exception_only(type(exc), exc)\nsummary = StackSummary.from_list([('a.py', 3, 'f', 'x = 1')])\ntext = summary.format()\n",
    "queue": "q = Queue()\nfor item in ('a', 'b', 'c'):\n    q.put(item)\nfirst = q.get()\nsize = q.qsize()\nlq = LifoQueue()\nlq.put(1)\nlq.put(2)\ntop = lq.get()\n",
    "cmd": "class Shell(Cmd):\n    def do_add(self, arg):\n        self.total = sum(int(x) for x in arg.split())\n\nsh = Shell()\nsh.onecmd('add 1 2 3')\ntotal = sh.total\ncmd_, arg, line = sh.parseline('add 4 5')\n",
    "configparser": "cp = ConfigParser()\ncp.read_string('[db]\\nhost = local\\nport = 5432\\n[app]\\ndebug = yes\\n')\nport = cp.getint('db', 'port')\ndebug = cp.getboolean('app', 'debug')\nsections = cp.sections()\n",
    "optparse": "parser = OptionParser()\nparser.add_option('-n', type='int', dest='count', default=1)\nparser.add_option('-q', action='store_true', dest='quiet')\nopts, args = parser.parse_args(['-n', '4', 'in.txt'])\ncount = opts.count\n",
    "argparse": "parser = ArgumentParser(prog='tool')\nparser.add_argument('path')\nparser.add_argument('--level', type=int, default=1)\nns = parser.parse_args(['data.csv', '--level', '3'])\nlevel = ns.level\n",
    "ast": "value = literal_eval(\"{'a': [1, 2.5], 'b': (None, True)}\")\ntree = parse('x = y + 1')\ntext = dump(tree.body[0].value)\nsrc = unparse(tree)\n",
    "http.cookies": "c = SimpleCookie()\nc.load('sid=abc123; theme=dark')\nsid = c['sid'].value\nc['sid']['path'] = '/'\nheader = c.output()\n",
    "xdrlib": "p = Packer()\np.pack_int(7)\np.pack_string(b'hi')\nraw = p.get_buffer()\nu = Unpacker(raw)\nn = u.unpack_int()\ns = u.unpack_string()\n",
    "locale": "norm = normalize('en_us')\nalias = normalize('de')\nconv = localeconv()\npoint = conv['decimal_point']\n",
    "pickletools": "import pickle\ndata = pickle.dumps({'a': [1, 2]}, protocol=2)\nsmall = optimize(data)\nops = [op.name for op, arg, pos in genops(small)]\n",
    "warnings": "with catch_warnings(record=True) as caught:\n    simplefilter('always')\n    warn('old api', DeprecationWarning)\nmessages = [str(w.message) for w in caught]\n",
}
