import { Button } from './Button';
import * as React from 'react';

export function App() { return <Button />; }
