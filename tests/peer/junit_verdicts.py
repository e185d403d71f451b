"""Print one line per test case of a regrtest --junit-xml file: "<id> <verdict>".

verdict is pass, skipped, failure or error. Used by tests/integration/peer_python.sh
to compare CPython's test_socket with and without the shim, test by test.
"""
import sys
import xml.etree.ElementTree as ET

for path in sys.argv[1:]:
    for tc in ET.parse(path).iter("testcase"):
        verdict = "pass"
        for child in tc:
            if child.tag in ("failure", "error", "skipped"):
                verdict = child.tag
        print(tc.get("name"), verdict)
