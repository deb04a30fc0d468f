"""Saves the screen of an X display (or a box of it) as a PNG (no xwd or
ImageMagick needed: Xlib through ctypes, PIL from ParaView's Python).
    pvpython xgrab.py OUT.png [LEFT,TOP,RIGHT,BOTTOM]   (DISPLAY names the display)"""
import ctypes
import ctypes.util
import sys

from PIL import Image


class XImage(ctypes.Structure):
    _fields_ = [("width", ctypes.c_int), ("height", ctypes.c_int), ("xoffset", ctypes.c_int),
                ("format", ctypes.c_int), ("data", ctypes.c_void_p), ("byte_order", ctypes.c_int),
                ("bitmap_unit", ctypes.c_int), ("bitmap_bit_order", ctypes.c_int), ("bitmap_pad", ctypes.c_int),
                ("depth", ctypes.c_int), ("bytes_per_line", ctypes.c_int), ("bits_per_pixel", ctypes.c_int)]


class XWindowAttributes(ctypes.Structure):
    _fields_ = [("x", ctypes.c_int), ("y", ctypes.c_int), ("width", ctypes.c_int), ("height", ctypes.c_int),
                ("rest", ctypes.c_char * 256)]


x = ctypes.cdll.LoadLibrary(ctypes.util.find_library("X11") or "libX11.so.6")
x.XOpenDisplay.restype = ctypes.c_void_p
x.XOpenDisplay.argtypes = [ctypes.c_char_p]
x.XDefaultRootWindow.restype = ctypes.c_ulong
x.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
x.XGetWindowAttributes.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.POINTER(XWindowAttributes)]
x.XGetImage.restype = ctypes.POINTER(XImage)
x.XGetImage.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_int, ctypes.c_uint, ctypes.c_uint,
                        ctypes.c_ulong, ctypes.c_int]
display = x.XOpenDisplay(None)
if not display:
    sys.exit("cannot open the X display")
root = x.XDefaultRootWindow(display)
attr = XWindowAttributes()
x.XGetWindowAttributes(display, root, ctypes.byref(attr))
img = x.XGetImage(display, root, 0, 0, attr.width, attr.height, 0xFFFFFFFF, 2).contents  # ZPixmap
if img.bits_per_pixel != 32:
    sys.exit("expected a 24/32-bit display, got %d bits per pixel" % img.bits_per_pixel)
raw = ctypes.string_at(img.data, img.bytes_per_line * img.height)
shot = Image.frombuffer("RGB", (img.width, img.height), raw, "raw", "BGRX", img.bytes_per_line, 1)
if len(sys.argv) > 2:
    shot = shot.crop(tuple(int(v) for v in sys.argv[2].split(",")))
shot.save(sys.argv[1], optimize=True)
print("saved %dx%d to %s" % (shot.width, shot.height, sys.argv[1]))
