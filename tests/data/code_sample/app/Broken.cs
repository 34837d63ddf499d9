<<<<<<< HEAD
=======
>>>>>>> merge gone wrong; nothing in this file is C#
