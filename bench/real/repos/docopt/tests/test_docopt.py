import pytest

from docopt import (
    DocoptExit,
    DocoptLanguageError,
    Option,
    docopt,
    parse_defaults,
    printable_usage,
)


def test_positional_arguments():
    assert docopt('usage: prog <a> <b>', ['1', '2']) == {'<a>': '1', '<b>': '2'}


def test_commands():
    doc = """usage: prog add <x>
       prog rm <x>"""
    assert docopt(doc, ['rm', 'f']) == {'add': False, 'rm': True, '<x>': 'f'}


def test_short_and_long_option_share_one_key():
    doc = """usage: prog [options]

options:
  -v, --verbose  say more"""
    assert docopt(doc, []) == {'--verbose': False}
    assert docopt(doc, ['-v']) == {'--verbose': True}
    assert docopt(doc, ['--verbose']) == {'--verbose': True}


def test_option_default():
    doc = """usage: prog [--speed=<kn>]

options:
  --speed=<kn>  speed in knots [default: 10]"""
    assert docopt(doc, []) == {'--speed': '10'}
    assert docopt(doc, ['--speed=20']) == {'--speed': '20'}
    assert docopt(doc, ['--speed', '30']) == {'--speed': '30'}


def test_stacked_short_options():
    doc = """usage: prog [-a] [-b] [-o FILE]

options:
  -a  all
  -b  brief
  -o FILE  output file"""
    assert docopt(doc, ['-ab', '-oout.txt']) == {'-a': True, '-b': True, '-o': 'out.txt'}


def test_long_option_prefix():
    assert docopt('usage: prog [--verbose]', ['--verb']) == {'--verbose': True}


def test_repeated_flag_is_counted():
    assert docopt('usage: prog [-v...]', []) == {'-v': 0}
    assert docopt('usage: prog [-v...]', ['-vvv']) == {'-v': 3}


def test_repeated_argument_is_a_list():
    assert docopt('usage: prog <file>...', ['a', 'b']) == {'<file>': ['a', 'b']}


def test_dash_is_an_argument():
    assert docopt('usage: cat <file>', ['-']) == {'<file>': '-'}


def test_double_dash_ends_options():
    doc = 'usage: prog [-v] [--] <arg>...'
    assert docopt(doc, ['--', '-v']) == {'--': True, '-v': False, '<arg>': ['-v']}


def test_options_first():
    doc = 'usage: prog [-v] <args>...'
    assert docopt(doc, ['a', '-v']) == {'-v': True, '<args>': ['a']}
    assert docopt(doc, ['a', '-v'], options_first=True) == {'-v': False, '<args>': ['a', '-v']}


def test_wrong_arguments_exit_with_the_usage():
    with pytest.raises(DocoptExit) as info:
        docopt('usage: prog <a>', [])
    assert str(info.value) == 'usage: prog <a>'


def test_doc_without_usage_is_an_error():
    with pytest.raises(DocoptLanguageError):
        docopt('prog <a>', [])


def test_help(capsys):
    doc = """usage: prog [-h]

options:
  -h, --help  show this"""
    with pytest.raises(SystemExit):
        docopt(doc, ['-h'])
    assert capsys.readouterr().out == doc + '\n'


def test_version(capsys):
    with pytest.raises(SystemExit):
        docopt('usage: prog [--version]', ['--version'], version='1.0')
    assert capsys.readouterr().out == '1.0\n'


def test_printable_usage():
    doc = """Usage: prog <a>

Options:
  -h  help"""
    assert printable_usage(doc) == 'Usage: prog <a>'


def test_parse_defaults():
    doc = """options:
  -q, --quiet  be quiet
  -o FILE  output [default: a.txt]"""
    assert parse_defaults(doc) == [
        Option('-q', '--quiet', 0, False),
        Option('-o', None, 1, 'a.txt'),
    ]


def test_option_parse():
    assert Option.parse('-s, --speed=<kn>  Speed [default: 10].') == Option('-s', '--speed', 1, '10')
