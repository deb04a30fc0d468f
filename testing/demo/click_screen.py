"""Clicks the left mouse button at a position of the X display (XTest
through ctypes), to press GUI buttons under Xvfb where xdotool is absent.
Usage: python3 click_screen.py X Y"""
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
xtest.XTestFakeMotionEvent(display, -1, x, y, 0)
x11.XFlush(display)
time.sleep(0.3)
for pressed in (1, 0):
    xtest.XTestFakeButtonEvent(display, 1, pressed, 0)
    x11.XFlush(display)
    time.sleep(0.1)
print("click_screen: clicked at %d %d" % (x, y))
