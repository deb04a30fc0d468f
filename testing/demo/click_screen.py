"""Clicks the left mouse button at a position of the X display (XTest
through ctypes), to press GUI buttons under Xvfb where xdotool is absent.
Optionally another button, several times (X buttons 4 and 5 are the
wheel's steps up and down, to scroll a panel).
Usage: python3 click_screen.py X Y [BUTTON [COUNT]]"""
import ctypes
import sys
import time

x11 = ctypes.cdll.LoadLibrary("libX11.so.6")
xtest = ctypes.cdll.LoadLibrary("libXtst.so.6")
x11.XOpenDisplay.restype = ctypes.c_void_p
display = ctypes.c_void_p(x11.XOpenDisplay(None))
if not display.value:
    sys.exit("click_screen: no X display")
x, y = int(sys.argv[1]), int(sys.argv[2])
button = int(sys.argv[3]) if len(sys.argv) > 3 else 1
count = int(sys.argv[4]) if len(sys.argv) > 4 else 1
xtest.XTestFakeMotionEvent(display, -1, x, y, 0)
x11.XFlush(display)
time.sleep(0.3)
for _ in range(count):
    for pressed in (1, 0):
        xtest.XTestFakeButtonEvent(display, button, pressed, 0)
        x11.XFlush(display)
        time.sleep(0.1)
print("click_screen: button %d clicked %d times at %d %d" % (button, count, x, y))
