"""Saves the X display's root window (the whole virtual screen of
xvfb-run) as a PNG, for screenshots of the ParaView GUI where no screen
grabber is installed: Xlib's XGetImage through ctypes, PIL for the PNG
(pvpython has both).  Usage: pvpython grab_screen.py OUT.png [x y w h]"""
import ctypes
import ctypes.util
import sys

from PIL import Image

x11 = ctypes.cdll.LoadLibrary(ctypes.util.find_library("X11") or "libX11.so.6")
x11.XOpenDisplay.restype = ctypes.c_void_p
x11.XDefaultRootWindow.restype = ctypes.c_ulong
x11.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
x11.XGetImage.restype = ctypes.c_void_p
x11.XGetImage.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_int, ctypes.c_uint,
                          ctypes.c_uint, ctypes.c_ulong, ctypes.c_int]
x11.XGetPixel.restype = ctypes.c_ulong
x11.XDisplayWidth.argtypes = x11.XDisplayHeight.argtypes = [ctypes.c_void_p, ctypes.c_int]


class XImage(ctypes.Structure):  # the leading fields of Xlib's XImage
    _fields_ = [("width", ctypes.c_int), ("height", ctypes.c_int), ("xoffset", ctypes.c_int),
                ("format", ctypes.c_int), ("data", ctypes.POINTER(ctypes.c_ubyte)),
                ("byte_order", ctypes.c_int), ("bitmap_unit", ctypes.c_int), ("bitmap_bit_order", ctypes.c_int),
                ("bitmap_pad", ctypes.c_int), ("depth", ctypes.c_int), ("bytes_per_line", ctypes.c_int),
                ("bits_per_pixel", ctypes.c_int)]


display = x11.XOpenDisplay(None)
if not display:
    sys.exit("grab_screen: no X display")
x, y = 0, 0
w, h = x11.XDisplayWidth(display, 0), x11.XDisplayHeight(display, 0)
if len(sys.argv) == 6:
    x, y, w, h = (int(v) for v in sys.argv[2:6])
ZPIXMAP, ALL_PLANES = 2, 0xFFFFFFFF
image = x11.XGetImage(display, x11.XDefaultRootWindow(display), x, y, w, h, ALL_PLANES, ZPIXMAP)
xi = ctypes.cast(image, ctypes.POINTER(XImage)).contents
if xi.bits_per_pixel != 32:
    sys.exit("grab_screen: %d bits per pixel not handled" % xi.bits_per_pixel)
raw = ctypes.string_at(xi.data, xi.bytes_per_line * xi.height)
Image.frombuffer("RGBX", (xi.width, xi.height), raw, "raw", "BGRX", xi.bytes_per_line, 1).convert("RGB").save(
    sys.argv[1])
print("grab_screen: %dx%d -> %s" % (w, h, sys.argv[1]))
